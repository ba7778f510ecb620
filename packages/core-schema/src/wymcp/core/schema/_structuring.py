"""The cattrs converter of a typed action: gated data in, the returned value out.

One converter per action, built at registration, with the hooks that read and write
dates and times as the ISO 8601 text their derived `format` admits, and that
fill a left-out field from its published JSON default (a new value every call).
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import cattrs

from wymcp.core.schema._unreadable import UnreadableDataError, locate


def _date_time(value: Any, _: type) -> dt.datetime:
    text = str(value).upper()
    # RFC 3339 admits a leap second, which datetime cannot hold: it reads as :59.
    if len(text) > 19 and text[17:19] == "60":  # noqa: PLR2004 - the seconds digits
        text = f"{text[:17]}59{text[19:]}"
    return dt.datetime.fromisoformat(text)


def _date(value: Any, _: type) -> dt.date:
    return dt.date.fromisoformat(str(value))


def _write_date_time(value: dt.datetime) -> str:
    return value.isoformat()


def _write_date(value: dt.date) -> str:
    return value.isoformat()


def make_converter() -> cattrs.Converter:
    """A converter that reads and writes dates and date-times as ISO 8601 text.

    It stops at the first value it cannot read (cattrs' detailed validation would
    build an exception group of every one, about 1.3 KB each): `locate` names
    the offending paths afterwards.
    """
    converter = cattrs.Converter(detailed_validation=False)
    converter.register_structure_hook(dt.datetime, _date_time)
    converter.register_structure_hook(dt.date, _date)
    converter.register_unstructure_hook(dt.datetime, _write_date_time)
    converter.register_unstructure_hook(dt.date, _write_date)
    return converter


def fill_defaults(
    converter: cattrs.Converter, filled: Mapping[type, Mapping[str, Any]]
) -> None:
    """Make `converter` fill each left-out field of a class in `filled`.

    `filled` maps a class to its fields' defaults written as JSON; a field a
    call leaves out is structured from a copy of that JSON, never taken from the
    attrs default, which is one object shared by every call (`default=[]`, or a
    factory's instance whose own fields share theirs).
    """

    def factory(cls: type) -> Callable[[Any, type], Any]:
        hook: Callable[[Any, type], Any] = converter.gen_structure_attrs_fromdict(cls)
        defaults = dict(filled.get(cls) or {})
        if not defaults:
            return hook
        names = frozenset(defaults)

        def structure(value: Any, target: type) -> Any:
            if value.__class__ is dict and not value.keys() >= names:
                value = {
                    **{
                        name: copy.deepcopy(default)
                        for name, default in defaults.items()
                        if name not in value
                    },
                    **value,
                }
            return hook(value, target)

        return structure

    converter.register_structure_hook_factory(attrs.has, factory)


def structurer(
    converter: cattrs.Converter, cls: type, action: str
) -> Callable[[Any], Any]:
    """The compiled structure function of `cls` (looked up once, called per call).

    Data it cannot read raises `UnreadableDataError` naming every offending path.
    """
    hook = converter.get_structure_hook(cls)

    def structure(data: Any) -> Any:
        try:
            return hook(data, cls)
        except Exception:  # noqa: BLE001 - never chain what quotes the value
            found = locate(converter.structure, data, cls)
        raise UnreadableDataError(action, found)

    return structure


def unstructurer(
    converter: cattrs.Converter, annotation: object, *, wrap: bool
) -> Callable[[Any], Any]:
    """The compiled unstructure function of a return annotation.

    With `wrap` (a list of objects) the list goes under `items`.
    """
    hook = converter.get_unstructure_hook(annotation)
    if wrap:

        def unstructure_list(value: Any) -> Any:
            return {"items": hook(value)}

        return unstructure_list
    return hook
