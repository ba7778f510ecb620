"""Turn raw name → value mappings into checked setting values, with cattrs.

One cattrs structuring function, generated from the declarations, converts
every given name and gathers every problem; a name that is no setting is
refused with the one it resembles (`Did you mean …?`).
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from wymcp.conf._problems import (
    ERROR,
    MISSPELT_NAME,
    CheckMessage,
    Invalid,
    echo_limit,
)
from wymcp.conf._settings import DECLARATIONS, SETTING_NAMES, Declaration, Settings


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
    import cattrs  # noqa: PLC0415
    from cattrs.gen import (  # noqa: PLC0415
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
    from cattrs.errors import ForbiddenExtraKeysError  # noqa: PLC0415

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
