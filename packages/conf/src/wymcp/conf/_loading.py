"""Read the settings: a module (Django style), the environment, explicit overrides.

The module is named by the `module` argument or `WYMCP_SETTINGS_MODULE`; only
its UPPERCASE names are read, and nothing is read before `load_settings()`.
Precedence: overrides, then `WYMCP_<NAME>` variables, then the module, then
defaults; one cattrs function, generated from the declarations, converts all.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

import attrs

from wymcp.conf._problems import (
    ERROR,
    MISSPELT_NAME,
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
    PREFIX,
    SETTING_NAMES,
    Declaration,
    Settings,
)

ENVIRONMENT_VARIABLE: Final = "WYMCP_SETTINGS_MODULE"
"""The variable naming the settings module when none is given."""


def resembles(name: str) -> str | None:
    """Return the known setting `name` looks like a misspelling of, or None."""
    matches = difflib.get_close_matches(name.upper(), SETTING_NAMES, n=1, cutoff=0.75)
    return matches[0] if matches else None


def misspelt(name: str, *, shown: str | None = None, prefix: str = "") -> CheckMessage:
    """The error for a name that is no setting: what it resembles, or the list."""
    guess = resembles(name)
    hint = (
        f"Did you mean {prefix}{guess}?"
        if guess is not None
        else f"Known settings: {', '.join(SETTING_NAMES)}."
    )
    told = shown if shown is not None else name[: echo_limit()]
    return CheckMessage(ERROR, MISSPELT_NAME, f"{told} is not a wymcp setting.", hint)


def _hook(declaration: Declaration) -> Callable[[Any, Any], Any]:
    def structure(value: Any, _type: Any) -> Any:
        if not declaration.is_set_by(value):
            assert declaration.factory is not None  # noqa: S101 - is_set_by says so
            return declaration.factory()
        return declaration.convert(declaration.name, value)

    return structure


@functools.cache  # code generated from the class, the same for every call
def _structurer() -> Callable[[Mapping[str, Any], type], dict[str, Any]]:
    # cattrs is imported when settings are first structured, not with wymcp.conf.
    import cattrs  # noqa: PLC0415 - see the comment above
    from cattrs.gen import (  # noqa: PLC0415 - with cattrs, as above
        make_dict_structure_fn_from_attrs,
        override,
    )

    converter = cattrs.Converter(detailed_validation=True, forbid_extra_keys=True)
    fields = [a for a in attrs.fields(Settings) if a.name in DECLARATIONS]
    hooks: dict[str, Any] = {
        name: override(struct_hook=_hook(d)) for name, d in DECLARATIONS.items()
    }
    return make_dict_structure_fn_from_attrs(fields, dict, converter, **hooks)


def structure(
    values: Mapping[str, object], *, notes: Mapping[str, str] | None = None
) -> tuple[dict[str, Any], list[CheckMessage]]:
    """Convert `values`; return the converted ones and every problem.

    A name that is no setting is an error naming the one it resembles.
    `notes` adds a sentence to the problems of some names (where the value
    came from, when that was not the settings module).
    """
    from cattrs import ClassValidationError  # noqa: PLC0415 - see _structurer

    try:
        return _structurer()(values, dict), []
    except ClassValidationError as group:
        return {}, _problems(group.exceptions, values, notes or {})


def _problems(
    errors: Iterable[BaseException],
    values: Mapping[str, object],
    notes: Mapping[str, str],
) -> list[CheckMessage]:
    from cattrs.errors import ForbiddenExtraKeysError  # noqa: PLC0415 - cattrs only when settings are checked

    found: list[CheckMessage] = []
    for error in errors:
        if isinstance(error, ForbiddenExtraKeysError):  # a name that is no setting
            found += [misspelt(name) for name in values if name in error.extra_fields]
        elif isinstance(error, Invalid):
            name = _attribute(error)
            note = notes.get(name, "")
            found += [
                attrs.evolve(p, message=f"{p.message} {note}".rstrip())
                for p in error.problems
            ]
        else:
            raise error
    return found


def _attribute(error: BaseException) -> str:
    """The setting a converter failed for, from cattrs' note `… @ attribute NAME`."""
    for note in getattr(error, "__notes__", ()):
        if isinstance(note, str) and " @ attribute " in note:
            return note.rsplit(" ", 1)[-1]
    return ""


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
        key: environment_note(DECLARATIONS[key].environment_variable)
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
