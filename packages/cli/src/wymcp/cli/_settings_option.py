"""`--settings MODULE` and the project folder on `sys.path`: finding the settings.

Shared by `wymcp serve`, `check`, `stdio`, `dev` and `config`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from wymcp.conf import ENVIRONMENT_VARIABLE


def add_settings_option(parser: argparse.ArgumentParser) -> None:
    """Add `--settings MODULE` (default: `$WYMCP_SETTINGS_MODULE`) to `parser`."""
    parser.add_argument(
        "--settings",
        metavar="MODULE",
        help=f"the settings module (default: ${ENVIRONMENT_VARIABLE})",
    )


def project_on_path() -> None:
    """Put the current directory first on `sys.path`, as `manage.py` and uvicorn do.

    A console script starts with its own folder on `sys.path`, not the
    directory it was started from, so `--settings myapp.settings` next to a
    `myapp/` folder would not import without it.
    """
    here = Path.cwd()
    if not any(Path(entry or os.curdir).absolute() == here for entry in sys.path):
        sys.path.insert(0, str(here))
