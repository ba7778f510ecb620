"""What every command that serves a settings module does the same way.

Loading, checks and building the engine, each problem printed as one line and
never a traceback: shared by `wymcp serve`, `check`, `stdio`, `config` and
`python -m wymcp.transport.stdio`. The arguments themselves are the command's.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import TextIO, TypeVar

from wymcp.conf._checks import (
    Check,
    Serving,
    in_order,
    settings_problems,
    unservable,
)
from wymcp.conf._loading import ENVIRONMENT_VARIABLE, read_settings
from wymcp.conf._problems import CheckMessage, ImproperlyConfigured, echo_limit
from wymcp.conf._settings import DECLARATIONS, ENVIRONMENT, Settings

_Built = TypeVar("_Built")


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
    environ = dict(os.environ)
    name = module or environ.get(ENVIRONMENT_VARIABLE)
    if not name:
        print(
            f"{command}: no settings module. Pass --settings myproject.settings or "
            f"set {ENVIRONMENT_VARIABLE}=myproject.settings.",
            file=err,
        )
        return None
    try:
        return read_settings(name, environ, overrides or {})
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
    serving: Serving | None = None,
    checks: Iterable[Check] = (),
) -> _Built | None:
    """Check `settings`, then `build` the server once; None if either fails.

    The checks `run_checks` makes, except that the declarations are checked
    by the one `build` (its failure is the E006 `wymcp check` reports), so a
    served engine is built once. Every problem goes to `report` (default:
    printed to `err`); errors stop here with a pointer to `wymcp check`.
    `serving` ("stdio", "http") leaves W002 out where it cannot matter (see
    `settings_problems`). `checks` are the serving packages' own (see `Check`).
    """
    problems = settings_problems(settings, serving=serving, checks=checks)
    built: _Built | None = None
    if not any(problem.is_error for problem in problems):
        try:
            built = build(settings)
        except Exception as exc:  # noqa: BLE001 - a declaration problem, told plainly
            problems.append(unservable(exc))
    for problem in in_order(problems):
        if report is None:
            print(str(problem), file=err)
        else:
            report(problem)
    if any(problem.is_error for problem in problems):
        print("wymcp: fix the errors above (see `wymcp check`).", file=err)
        return None
    return built


def describe_settings(settings: Settings) -> list[str]:
    """One line per setting: its value (secrets hidden) and where it came from."""
    lines = []
    for name, declaration in DECLARATIONS.items():
        origin = settings.origin(name)
        if origin == ENVIRONMENT:
            origin = f"{origin} {declaration.environment_variable}"
        value = getattr(settings, name)
        hidden = declaration.secret and value not in (None, ())
        shown = "(hidden)" if hidden else repr(value)[: echo_limit()]
        lines.append(f"{name} = {shown}  [{origin}]")
    return lines
