"""Read the settings: a module (Django style), the environment, explicit overrides.

The module is named by the `module` argument or `WYMCP_SETTINGS_MODULE`; only
its UPPERCASE names are read, and nothing is read before `load_settings()`.
Precedence: overrides, then `WYMCP_<NAME>` variables, then the module, then defaults.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Final

from wymcp.conf._problems import (
    ERROR,
    UNIMPORTABLE_MODULE,
    CheckMessage,
    ImproperlyConfigured,
    Invalid,
    echo_limit,
)
from wymcp.conf._settings import (
    DECLARATIONS,
    ENVIRONMENT,
    MODULE,
    OVERRIDE,
    Settings,
)
from wymcp.conf._structuring import misspelt, resembles, structure

ENVIRONMENT_VARIABLE: Final = "WYMCP_SETTINGS_MODULE"
PREFIX: Final = "WYMCP_"


def _read_module(name: str) -> dict[str, object]:
    shown = name[: echo_limit()]
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            message = f"The settings module {shown!r} cannot be found."
            hint = (
                f"Check the dotted name given by --settings or {ENVIRONMENT_VARIABLE}, "
                "and that its package is on the Python path."
            )
        else:
            message = (
                f"The settings module {shown!r} imports {exc.name!r}, "
                "which cannot be found."
            )
            hint = "Install the missing package or fix the import."
        raise ImproperlyConfigured(
            [CheckMessage(ERROR, UNIMPORTABLE_MODULE, message, hint)]
        ) from None
    except Exception as exc:  # noqa: BLE001 - the user's module raised; report it
        raise ImproperlyConfigured(
            [
                CheckMessage(
                    ERROR,
                    UNIMPORTABLE_MODULE,
                    f"Importing the settings module {shown!r} raised "
                    f"{type(exc).__name__}: {str(exc)[:200]}.",
                    f"Fix the error in {shown}.",
                )
            ]
        ) from None
    return {key: value for key, value in vars(module).items() if key.isupper()}


def _from_module(raw: Mapping[str, object]) -> tuple[dict[str, object], list[str]]:
    """The names to convert (settings, and misspellings of one), and the rest."""
    kept: dict[str, object] = {}
    unknown: list[str] = []
    for name, value in raw.items():
        if name in DECLARATIONS or resembles(name) is not None:
            kept[name] = value
        else:
            unknown.append(name)
    return kept, unknown


def _from_environment(
    environ: Mapping[str, str],
) -> tuple[dict[str, object], list[CheckMessage], list[str]]:
    """Read every `WYMCP_<NAME>` variable by its setting's rule.

    Returns the values, the problems (a misspelt name, text that does not
    read as the kind of its setting) and the unknown variables (warned).
    """
    values: dict[str, object] = {}
    problems: list[CheckMessage] = []
    unknown: list[str] = []
    for variable, text in environ.items():
        if not variable.startswith(PREFIX) or variable == ENVIRONMENT_VARIABLE:
            continue
        name = variable.removeprefix(PREFIX)
        declaration = DECLARATIONS.get(name)
        if declaration is None:
            if resembles(name) is None:
                unknown.append(variable)
            else:
                shown = f"The environment variable {variable[: echo_limit()]}"
                problems.append(misspelt(name, shown=shown, prefix=PREFIX))
            continue
        try:
            values[name] = declaration.convert.from_text(name, text)
        except Invalid as exc:
            problems += [_noted(p, variable) for p in exc.problems]
    return values, problems, unknown


def _noted(problem: CheckMessage, variable: str) -> CheckMessage:
    message = f"{problem.message} {environment_note(variable)}"
    return CheckMessage(problem.level, problem.id, message, problem.hint)


def environment_note(variable: str) -> str:
    """The sentence saying a value came from the environment (never the value)."""
    return f"(The value came from the environment variable {variable}.)"


def _same_secret(environment: object, module: object) -> bool:
    """Whether the module's STATE_SECRETS already holds the environment's key.

    A module that reads `os.environ["WYMCP_STATE_SECRET"]` into STATE_SECRETS
    names the same key the variable does: the variable adds nothing then.
    """
    if not isinstance(module, list | tuple) or not isinstance(environment, str):
        return False
    key = environment.encode()
    return any(
        (item.encode() if isinstance(item, str) else item) == key for item in module
    )


def read_settings(
    name: str | None, environ: Mapping[str, str], overrides: Mapping[str, object]
) -> Settings:
    """Load the module `name` (None: none), `environ`'s variables and `overrides`.

    Raises `ImproperlyConfigured` listing every problem (see `load_settings`).
    """
    module_values, unknown = _from_module(_read_module(name) if name else {})
    env_values, problems, env_unknown = _from_environment(environ)
    if "STATE_SECRETS" in module_values and _same_secret(
        env_values.get("STATE_SECRET"), module_values["STATE_SECRETS"]
    ):
        del env_values["STATE_SECRET"]
    origins = dict.fromkeys(module_values, MODULE)
    origins.update(dict.fromkeys(env_values, ENVIRONMENT))
    origins.update(dict.fromkeys(overrides, OVERRIDE))
    values = {**module_values, **env_values, **overrides}
    notes = {
        key: environment_note(PREFIX + key)
        for key, origin in origins.items()
        if origin == ENVIRONMENT
    }
    converted, invalid = structure(values, notes=notes)
    problems += invalid
    if problems:
        raise ImproperlyConfigured(problems)
    return Settings(
        origins=tuple(
            (key, origin)
            for key, origin in origins.items()
            if DECLARATIONS[key].is_set_by(values[key])
        ),
        unknown=(*unknown, *env_unknown),
        module=name or None,
        **converted,
    )


def load_settings(module: str | None = None, **overrides: object) -> Settings:
    """Load the settings module, the environment, UPPERCASE `overrides`; check all.

    The module is `module`, else the one named by `WYMCP_SETTINGS_MODULE`, else
    none (the defaults). Every setting may also come from a `WYMCP_<NAME>`
    variable. Raises `ImproperlyConfigured` listing every problem: a wrong
    type, a misspelt name (naming the setting it resembles), an unimportable
    dotted path, an invalid value. Other unknown UPPERCASE names of the module
    and unknown `WYMCP_` variables are kept in `Settings.unknown` (warned).
    """
    environ = dict(os.environ)
    name = module if module is not None else environ.get(ENVIRONMENT_VARIABLE)
    return read_settings(name, environ, overrides)
