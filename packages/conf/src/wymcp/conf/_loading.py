"""Read a settings module (Django style) into a checked, frozen `Settings`.

The module is named by the `module` argument or the `WYMCP_SETTINGS_MODULE`
environment variable; only its UPPERCASE names are read, and nothing is read
before `load_settings()` is called.
"""

from __future__ import annotations

import importlib
import os

from wymcp.conf._check_message import ERROR, CheckMessage
from wymcp.conf._improperly_configured import ImproperlyConfigured
from wymcp.conf._settings import Settings
from wymcp.conf._validation import convert, sort_names

ENVIRONMENT_VARIABLE = "WYMCP_SETTINGS_MODULE"
UNIMPORTABLE_MODULE = "wymcp.E005"


def _read_module(name: str) -> dict[str, object]:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            message = f"The settings module {name[:120]!r} cannot be found."
            hint = (
                f"Check the dotted name given by --settings or {ENVIRONMENT_VARIABLE}, "
                "and that its package is on the Python path."
            )
        else:
            message = (
                f"The settings module {name[:120]!r} imports {exc.name!r}, "
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
                    f"Importing the settings module {name[:120]!r} raised "
                    f"{type(exc).__name__}: {str(exc)[:200]}.",
                    f"Fix the error in {name[:120]}.",
                )
            ]
        ) from None
    return {key: value for key, value in vars(module).items() if key.isupper()}


def load_settings(module: str | None = None, **overrides: object) -> Settings:
    """Load the settings module, apply UPPERCASE `overrides`, check everything.

    The module is `module`, else the one named by `WYMCP_SETTINGS_MODULE`, else
    none (the defaults). Raises `ImproperlyConfigured` listing every problem:
    a wrong type, a misspelt name (naming the setting it resembles), an
    unimportable dotted path, an invalid value. Other unknown UPPERCASE names
    of the module are kept in `Settings.unknown` for `run_checks()` to warn.
    """
    name = module if module is not None else os.environ.get(ENVIRONMENT_VARIABLE)
    raw = _read_module(name) if name else {}
    known, problems, unknown = sort_names(raw, strict=False)
    over_known, over_problems, _ = sort_names(overrides, strict=True)
    problems += over_problems
    values = {key: raw[key] for key in known}
    values.update({key: overrides[key] for key in over_known})
    converted, invalid = convert(values)
    problems += invalid
    if problems:
        raise ImproperlyConfigured(problems)
    explicit = frozenset(values)
    if converted.get("STATE_SECRET", b"") is None:
        del converted["STATE_SECRET"]
        explicit -= {"STATE_SECRET"}
    return Settings(
        explicit=explicit,
        unknown=tuple(unknown),
        module=name or None,
        **converted,
    )
