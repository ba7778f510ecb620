"""docs/settings.md: its tables are what the settings declarations generate."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import attrs

from wymcp.conf._engine import PROGRAMMATIC_ONLY
from wymcp.conf._settings import DECLARATIONS
from wymcp.core.server import EngineOptions

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "settings.md"


def _script() -> ModuleType:
    """scripts/settings_table.py, the writer of the tables (not a package)."""
    spec = importlib.util.spec_from_file_location(
        "settings_table", ROOT / "scripts" / "settings_table.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()
END_MARKER, TABLES = SCRIPT.END_MARKER, SCRIPT.TABLES
begin_marker, regenerate = SCRIPT.begin_marker, SCRIPT.regenerate


def test_the_page_holds_each_generated_table_once():
    page = PAGE.read_text(encoding="utf-8")
    for name in TABLES:
        assert page.count(begin_marker(name)) == 1
    assert page.count(END_MARKER) == len(TABLES)


def test_the_tables_in_the_page_are_what_the_declarations_generate():
    page = PAGE.read_text(encoding="utf-8")
    assert regenerate(page) == page, (
        "docs/settings.md and the declarations in wymcp.conf._settings differ: "
        "run python scripts/settings_table.py"
    )


def test_an_edited_row_is_told_apart():
    page = PAGE.read_text(encoding="utf-8")
    edited = page.replace("| `PORT` | `8000` |", "| `PORT` | `8080` |")
    assert edited != page
    assert regenerate(edited) == page


def test_every_setting_has_a_row_and_every_row_a_setting():
    table = TABLES["settings"]()
    rows = [line.split(" | ")[0].strip("|` ") for line in table.splitlines()[2:]]
    assert rows == list(DECLARATIONS)


def test_every_engine_option_is_fed_by_a_setting_or_said_to_be_code_only():
    fields = {field.name for field in attrs.fields(EngineOptions)}
    fed = [d.engine for d in DECLARATIONS.values() if d.engine is not None]
    assert len(fed) == len(set(fed)), "two settings feed one engine option"
    assert set(fed) <= fields
    assert set(PROGRAMMATIC_ONLY) <= fields
    assert not set(fed) & set(PROGRAMMATIC_ONLY)
    assert fields == set(fed) | set(PROGRAMMATIC_ONLY), (
        "an EngineOptions field has neither a setting (engine=...) nor a reason "
        "in wymcp.conf._engine.PROGRAMMATIC_ONLY"
    )


def test_every_check_a_setting_names_is_a_check_the_page_lists():
    """A row's "checks" column points at check ids a reader can look up.

    LOOP's row named E017, which no check raises (the missing-uvloop check is
    E014): a reader looking the code up found nothing.
    """
    page = PAGE.read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `wymcp\.([EW]\d{3})` \|", page, re.MULTILINE))
    assert listed, "the page lists no check ids"
    for name, declaration in DECLARATIONS.items():
        for code in re.findall(r"\b([EW]\d{3})\b", declaration.checks):
            assert code in listed, (name, code)
