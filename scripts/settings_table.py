"""Write the generated tables of docs/settings.md from the settings declarations.

`python scripts/settings_table.py` rewrites the page's tables between their
`generated` markers; `--check` only says whether the page is up to date (exit
1 if not). tests/docs/test_settings_table.py makes the same comparison.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final

from wymcp.conf._converters import ENVIRONMENT_RULES
from wymcp.conf._engine import PROGRAMMATIC_ONLY
from wymcp.conf._settings import DECLARATIONS, Declaration

PAGE: Final = Path(__file__).resolve().parent.parent / "docs" / "settings.md"
_MIB: Final = 1024 * 1024


def _default(declaration: Declaration) -> str:
    if declaration.shown:
        return declaration.shown
    value = declaration.default
    if isinstance(value, str):
        return f'`"{value}"`'
    if type(value) is int and value >= _MIB and value % _MIB == 0:
        return f"`{value}` ({value // _MIB} MiB)"
    return f"`{value!r}`"


def _cell(text: str) -> str:
    from wymcp.core.server import RETRY_AFTER  # noqa: PLC0415 - only for the docs

    return text.replace("{RETRY_AFTER}", str(RETRY_AFTER)).replace("|", "\\|")


def settings_table() -> str:
    """Every setting: default, meaning, what is checked, the engine option it feeds."""
    lines = [
        "| setting | default | meaning | checked | engine option |",
        "|---|---|---|---|---|",
    ]
    for name, declaration in DECLARATIONS.items():
        checked = declaration.convert.checked()
        if declaration.checks:
            checked = f"{checked}; {declaration.checks}"
        engine = f"`{declaration.engine}`" if declaration.engine else ""
        cells = [f"`{name}`", _default(declaration), declaration.doc, checked, engine]
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines)


def environment_table() -> str:
    """How `WYMCP_<NAME>` is read, per kind of setting, and the settings of each."""
    lines = ["| kind | the variable's text is read as | settings |", "|---|---|---|"]
    for kind, rule in ENVIRONMENT_RULES.items():
        names = [
            f"`{name}`"
            for name, declaration in DECLARATIONS.items()
            if declaration.convert.kind == kind
        ]
        lines.append(f"| {kind} | {rule} | {', '.join(names)} |")
    return "\n".join(lines)


def programmatic_table() -> str:
    """The engine options no setting feeds, and why."""
    lines = ["| `EngineOptions` field | why it has no setting |", "|---|---|"]
    lines += [f"| `{field}` | {why} |" for field, why in PROGRAMMATIC_ONLY.items()]
    return "\n".join(lines)


TABLES: Final[dict[str, Callable[[], str]]] = {
    "settings": settings_table,
    "environment": environment_table,
    "programmatic": programmatic_table,
}
"""Each generated table of docs/settings.md, by the name its markers carry."""


def begin_marker(name: str) -> str:
    """The line that opens a generated table in the page."""
    return (
        f"<!-- generated: {name} table, from the declarations in "
        "wymcp.conf._settings (python scripts/settings_table.py) -->"
    )


END_MARKER: Final = "<!-- end of generated table -->"


def regenerate(page: str) -> str:
    """`page` with every generated table replaced by what the declarations give."""
    for name, render in TABLES.items():
        begin = begin_marker(name)
        start = page.index(begin) + len(begin)
        end = page.index(END_MARKER, start)
        page = f"{page[:start]}\n{render()}\n{page[end:]}"
    return page


def main() -> int:
    """Rewrite (or, with --check, compare) the page; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    page = PAGE.read_text(encoding="utf-8")
    wanted = regenerate(page)
    if args.check:
        if wanted != page:
            print(f"{PAGE} is out of date: run python scripts/settings_table.py")
            return 1
        return 0
    PAGE.write_text(wanted, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
