"""Every module of the packages and services says what it is for in 1-5 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(
    [*ROOT.glob("packages/*/src/**/*.py"), *ROOT.glob("services/*/src/**/*.py")]
)


def test_the_modules_are_found():
    assert len(MODULES) > 50


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_module_docstring_says_what_it_is_for_in_one_to_five_lines(path: Path):
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert docstring, "add a module docstring saying what the module is for"
    lines = [line for line in docstring.splitlines() if line.strip()]
    assert 1 <= len(lines) <= 5, f"{len(lines)} lines: say it in at most five"
