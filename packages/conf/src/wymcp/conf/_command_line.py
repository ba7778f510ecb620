"""What every command that serves a settings module does the same way.

`--settings`, the project folder on `sys.path`, loading, checks and building the
engine, each problem printed as one line and never a traceback: shared by
`wymcp serve`, `check`, `stdio`, `config` and `python -m wymcp.transport.stdio`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TextIO, TypeVar

from wymcp.conf._check_message import CheckMessage
from wymcp.conf._checks import run_checks
from wymcp.conf._improperly_configured import ImproperlyConfigured
from wymcp.conf._loading import ENVIRONMENT_VARIABLE, load_settings
from wymcp.conf._settings import Settings

_Built = TypeVar("_Built")

_BUILD_REASON = 2000
"""Longest part of a build failure's text that is printed."""


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


def print_problems(problems: Iterable[CheckMessage], out: TextIO) -> None:
    """Print each problem as its one line (id, what is wrong, the fix)."""
    for problem in problems:
        print(str(problem), file=out)


def settings_for_command(
    module: str | None,
    err: TextIO,
    overrides: Mapping[str, object] | None = None,
    *,
    command: str = "wymcp",
) -> Settings | None:
    """Load `module` (or `$WYMCP_SETTINGS_MODULE`) with `overrides` applied.

    None when there is no module or it cannot be used: why is printed to
    `err`, each line starting with `command`.
    """
    name = module or os.environ.get(ENVIRONMENT_VARIABLE)
    if not name:
        print(
            f"{command}: no settings module. Pass --settings myproject.settings or "
            f"set {ENVIRONMENT_VARIABLE}=myproject.settings.",
            file=err,
        )
        return None
    try:
        return load_settings(name, **(overrides or {}))
    except ImproperlyConfigured as exc:
        print(f"{command}: the settings module {name!r} cannot be used:", file=err)
        print_problems(exc.problems, err)
        return None


def engine_for_command(
    settings: Settings,
    build: Callable[[Settings], _Built],
    err: TextIO,
    *,
    report: Callable[[CheckMessage], object] | None = None,
) -> _Built | None:
    """Check `settings`, then `build` the server; None if either fails.

    Every problem goes to `report` (default: printed to `err`); errors stop
    here with a pointer to `wymcp check`, as does a server that cannot be built.
    """
    problems = run_checks(settings)
    for problem in problems:
        if report is None:
            print(str(problem), file=err)
        else:
            report(problem)
    if any(problem.is_error for problem in problems):
        print("wymcp: fix the errors above (see `wymcp check`).", file=err)
        return None
    try:
        return build(settings)
    except Exception as exc:  # noqa: BLE001 - a declaration problem, told plainly
        reason = str(exc)[:_BUILD_REASON]
        print(f"wymcp: the server cannot be built: {reason}", file=err)
        return None
