# wymcp tasks. Every recipe uses the tools in .venv (made by scripts/bootstrap.py).
set shell := ["bash", "-euo", "pipefail", "-c"]

venv := ".venv/bin"
packages := "-p wymcp.core.schema -p wymcp.core.gates -p wymcp.core.server -p wymcp.conf -p wymcp.transport.aiohttp -p wymcp.transport.stdio -p wymcp.broker.redis -p wymcp.testing -p wymcp.cli -p wymcp_tasks -p wymcp_conformance"

# List the recipes.
default:
    @just --list

# Create or refresh .venv exactly as uv.lock says (every member editable, the dev tools).
bootstrap:
    python3 scripts/bootstrap.py

# Refresh every lock (uv.lock, locks/*.txt, locks/node) after a change of range; review, commit.
lock:
    python3 scripts/bootstrap.py --lock

# The unit tests at the lowest versions the packages' ranges allow (locks/lowest.txt).
check-lowest:
    python3 scripts/side_envs.py lowest

# Never in CI (CI must not depend on the day): it finds the next breaking release
# before a user does.
# mypy and the whole suite at the newest versions the ranges allow; prints what moved.
check-latest:
    python3 scripts/side_envs.py latest

# ruff: lint and formatting.
lint:
    {{venv}}/ruff check .
    {{venv}}/ruff format --check .

# Format the tree in place.
fmt:
    {{venv}}/ruff format .
    {{venv}}/ruff check --fix .

# mypy --strict over every package and service, and the docs site's extensions.
types:
    {{venv}}/mypy {{packages}}
    {{venv}}/mypy docs/conf.py docs/_ext

# The layer contracts (import-linter).
arch:
    {{venv}}/lint-imports

# The unit and integration tests (pytest exits 5 on no tests, which fails here too).
test *args:
    {{venv}}/pytest {{args}}

# The docs site into .cache/docs/html (Sphinx; docs/development.md). Strict: a
# broken link, a page in no toctree or a reference that does not resolve fails it.
# Always a fresh build (-E): a saved environment would not repeat old warnings.
docs:
    {{venv}}/sphinx-build -E -W --keep-going -n -q -b html docs .cache/docs/html
    @echo "docs: .cache/docs/html/index.html"

# The official MCP conformance suite, three runs, against the fixture server.
conformance:
    bash scripts/conformance.sh

# Benchmarks side by side with the peers (long; writes docs/performance.md).
bench *args:
    {{venv}}/python benchmarks/run.py {{args}}

# The benchmark harness in smoke mode: a few requests per case, asserts nothing about speed.
bench-smoke:
    {{venv}}/python benchmarks/run.py --smoke

# A wheel and an sdist of every package into dist/ (versions checked against
# VERSION, then `twine check --strict`); install with
# `pip install --find-links dist "wymcp-cli[http]"`.
dist *args:
    {{venv}}/python scripts/dist.py {{args}}

# Check that every package is the release in VERSION, or set a new one
# everywhere (`just version set 0.3.0`, then `python3 scripts/bootstrap.py --lock`
# and a CHANGELOG entry).
version *args:
    {{venv}}/python scripts/version.py {{args}}

# Serve the tasks demo on 127.0.0.1:8000/mcp.
serve:
    {{venv}}/wymcp serve --settings wymcp_tasks.settings

# Everything CI runs: lint, types, layers, docs, tests, lowest versions, conformance.
check: lint types arch docs test check-lowest conformance

# A long, bounded fuzzing run of the endpoint and the gates.
fuzz minutes="10":
    {{venv}}/python scripts/fuzz.py --minutes {{minutes}}

# 200 concurrent clients for 60 seconds of mixed traffic against one server.
soak *args:
    {{venv}}/python scripts/soak.py {{args}}
