"""Write the generated tables of docs/settings.md from the settings declarations.

`python scripts/settings_table.py` rewrites the page in place; `--check` only
says whether it is up to date (exit 1 if not), as tests/docs does.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wymcp.conf._docs_table import regenerate

PAGE = Path(__file__).resolve().parent.parent / "docs" / "settings.md"


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
