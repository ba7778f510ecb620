"""Every protocol-revision check of core-server goes through `Revision` (_revision.py).

No other module compares a version, spells one, or asks an `is_modern`-style
helper: what differs between revisions is a field of the request's `Revision`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "packages/core-server/src/wymcp/core/server"
HOME = SERVER / "_revision.py"
MODULES = sorted(p for p in SERVER.glob("*.py") if p != HOME)

TEXT = re.compile(r"is_modern|has_titles|== MODERN|2025-03-26")
"""What a revision check used to look like, as the issue greps for it."""
VERSION = re.compile(r"\d{4}-\d{2}-\d{2}")
HELPERS = {"is_modern", "has_titles", "modern"}
CONSTANTS = {"MODERN"}


def _problems(tree: ast.AST) -> list[str]:
    problems: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in HELPERS:
            problems.append(f"line {node.lineno}: {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in HELPERS:
            problems.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for side in sides:
                if isinstance(side, ast.Name) and side.id in CONSTANTS:
                    problems.append(f"line {node.lineno}: compares with {side.id}")
                if (
                    isinstance(side, ast.Constant)
                    and isinstance(side.value, str)
                    and VERSION.fullmatch(side.value)
                ):
                    problems.append(f"line {node.lineno}: compares {side.value}")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and VERSION.fullmatch(node.value)
        ):
            problems.append(f"line {node.lineno}: spells {node.value}")
    return problems


def test_the_modules_are_found():
    assert HOME.exists()
    assert len(MODULES) > 30


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_module_but_revision_greps_like_a_revision_check(path: Path):
    text = path.read_text(encoding="utf-8")
    hits = [
        f"line {number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), 1)
        if TEXT.search(line)
    ]
    assert hits == [], "ask the call's Revision instead"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_module_but_revision_compares_or_spells_a_version(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert _problems(tree) == [], "ask the call's Revision instead"


def test_the_checks_catch_what_they_look_for():
    sample = ast.parse(
        "a = call.modern\n"
        "b = is_modern(v)\n"
        "c = version == MODERN\n"
        "d = v != '2025-06-18'\n"
        "e = ('2025-11-25',)\n"
        "f = revision.stateless\n"
        "g = 'served at 2026-07-28 only'\n"
    )
    found = _problems(sample)
    lines = sorted({int(p.split(":")[0].split()[1]) for p in found})
    assert lines == [1, 2, 3, 4, 5]
    assert TEXT.search("if v == MODERN:")
    assert TEXT.search('"2025-03-26"')
