"""The public surface of wymcp.cli is exactly this list; the `wymcp` script runs it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import wymcp.cli

ROOT = Path(__file__).resolve().parents[2]


def test_the_facade_exports_main():
    assert wymcp.cli.__all__ == ["main"]
    assert callable(wymcp.cli.main)


def test_the_console_script_is_the_clis_and_only_the_clis():
    scripts = {}
    for pyproject in sorted(ROOT.glob("packages/*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text())["project"]
        for name, target in project.get("scripts", {}).items():
            scripts[name] = (project["name"], target)
    assert scripts == {"wymcp": ("wymcp-cli", "wymcp.cli:main")}
