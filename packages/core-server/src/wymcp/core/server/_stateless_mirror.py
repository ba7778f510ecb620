"""Mirrored headers of 2026-07-28.

`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` must match
the body and be plain visible ASCII as sent (anything else travels
`=?base64?…?=`-wrapped), else 400 with -32020.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from wymcp.core.schema import HeaderAnnotation, decode_header_value
from wymcp.core.server._exchange import Headers
from wymcp.core.server._header_names import (
    METHOD_KEY,
    NAME_KEY,
    PARAM_HEADER_PREFIX,
    PARAM_KEY_PREFIX,
    VERSION_KEY,
)
from wymcp.core.server._jsonrpc import header_mismatch as mismatch
from wymcp.core.server._revision import REVISIONS

NAMED_METHODS: Final = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
"""Methods whose `Mcp-Name` mirrors a body field, and which field."""

_PARAM_PREFIX: Final = PARAM_KEY_PREFIX
_PLAIN_VERSIONS: Final = frozenset(REVISIONS)
_PLAIN_METHODS: Final = frozenset().union(*(r.methods for r in REVISIONS.values()))
"""Versions and methods whose header, sent exactly as the body names them,
passes as sent (visible ASCII, no blanks, no `=?base64?` wrapping)."""
_PLAIN_FIELDS: Final = {method: NAMED_METHODS.get(method) for method in _PLAIN_METHODS}
"""Each plain method's field its `Mcp-Name` mirrors (None: no `Mcp-Name`)."""
_INTEGER: Final = re.compile(r"-?[0-9]+")


HeaderIndex = Mapping[str, list[str]]
"""Header values by lower-case name, in arrival order."""


class DuplicatedHeaderError(ValueError):
    """A header that must come once came more than once."""


def once(headers: HeaderIndex, name: str) -> str | None:
    """The one value of header `name` (lower case), or None when absent.

    The one check of a header that must come once (the session headers, the
    mirrored headers, each `Mcp-Param-*`): DuplicatedHeaderError when repeated.
    """
    values = headers.get(name)
    if values is None:
        return None
    if len(values) > 1:
        raise DuplicatedHeaderError(name)
    return values[0]


def _visible(header: str, value: str) -> str:
    """`value` stripped; -32020 when it holds anything but visible ASCII.

    A raw non-ASCII byte (or a control character) is invalid in a mirrored
    header whatever the body says: the client must base64-wrap such a value.
    """
    value = value.strip(" \t")
    if not (value.isascii() and value.isprintable()):
        raise mismatch(
            f"the {header} header holds characters other than visible ASCII. "
            "Send such a value as =?base64?...?=."
        )
    return value


def single(headers: HeaderIndex, name: str) -> str | None:
    """The one value of `name` (lower case), stripped; -32020 when sent twice.

    A value that is not visible ASCII is -32020 too.
    """
    try:
        value = once(headers, name)
    except DuplicatedHeaderError:
        raise mismatch(
            f"{name} was sent more than once. Send it exactly once."
        ) from None
    return None if value is None else _visible(name, value)


def check_standard(
    headers: HeaderIndex, method: str, version: str, params: Mapping[str, Any]
) -> None:
    """Compare `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` with the body.

    The usual request sends each header once, exactly as the body has it, and
    the body's values are visible ASCII that no `=?base64?` wrapping or
    stripping changes: that is accepted at once. Anything else takes the full
    comparison, which says what differs.
    """
    # indexing, not `.get` (a method call each), and one table of the plain
    # methods' fields: a header or a field absent is a KeyError, the full way
    try:
        sent_version = headers[VERSION_KEY]
        sent_method = headers[METHOD_KEY]
        field = _PLAIN_FIELDS[method]
        if (
            len(sent_version) == 1
            and len(sent_method) == 1
            and sent_version[0] == version
            and sent_method[0] == method
            and version in _PLAIN_VERSIONS
        ):
            if field is None:
                return
            sent_name = headers[NAME_KEY]
            body_name = params[field]
            if (
                len(sent_name) == 1
                and sent_name[0] == body_name
                and body_name.isascii()
                and body_name.isprintable()
                and body_name.strip(" \t") == body_name
                and not body_name.startswith("=?")
            ):
                return
    except KeyError:
        pass
    _check_standard(headers, method, version, params)


def _check_standard(
    headers: HeaderIndex, method: str, version: str, params: Mapping[str, Any]
) -> None:
    """`check_standard` for any headers: the -32020 that says what differs."""
    sent_version = single(headers, VERSION_KEY)
    if sent_version is None:
        raise mismatch("the MCP-Protocol-Version header is missing.")
    if sent_version != version:
        raise mismatch(
            "the MCP-Protocol-Version header differs from the _meta protocolVersion."
        )
    sent_method = single(headers, METHOD_KEY)
    if sent_method is None:
        raise mismatch("the Mcp-Method header is missing.")
    if sent_method != method:
        raise mismatch("the Mcp-Method header differs from the body's method.")
    field = NAMED_METHODS.get(method)
    if field is None:
        return
    sent_name = single(headers, NAME_KEY)
    body_name = params.get(field)
    if sent_name is None:
        if isinstance(body_name, str):
            raise mismatch("the Mcp-Name header is missing.")
        return
    try:
        decoded = decode_header_value(sent_name)
    except ValueError:
        raise mismatch("the Mcp-Name header is not valid base64.") from None
    if decoded != body_name:
        raise mismatch(f"the Mcp-Name header differs from the body's {field}.")


ABSENT: Final[Any] = object()


def value_at(arguments: Mapping[str, Any], path: Iterable[str]) -> Any:
    """The argument an annotation's `path` names, or `ABSENT`."""
    value: Any = arguments
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return ABSENT
        value = value[key]
    return value


def _same(kind: str, decoded: str, value: Any) -> bool:
    if kind == "boolean":
        return isinstance(value, bool) and decoded == ("true" if value else "false")
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if not _INTEGER.fullmatch(decoded):
            return False
        sign, digits = ("-", decoded[1:]) if decoded[0] == "-" else ("", decoded)
        try:
            number = int(sign + (digits.lstrip("0") or "0"))
        except ValueError:  # more digits than Python converts: no body value has
            return False
        return number == value
    return isinstance(value, str) and decoded == value


def check_params(
    headers: Headers,
    annotations: Iterable[HeaderAnnotation],
    arguments: Mapping[str, Any],
) -> None:
    """Compare each annotated argument with its `Mcp-Param-*` header."""
    index = headers.index
    if headers.repeated:
        for name, values in index.items():
            if len(values) > 1 and name.startswith(_PARAM_PREFIX):
                raise mismatch("an Mcp-Param-* header was sent more than once.")
    for annotation in annotations:
        header = f"{PARAM_HEADER_PREFIX}{annotation.header}"
        sent = index.get(header.lower())
        raw = sent[0] if sent else None
        value = value_at(arguments, annotation.path)
        if value is ABSENT or value is None:
            if raw is not None:
                raise mismatch(f"{header} was sent without its argument.")
            continue
        if raw is None:
            raise mismatch(f"the {header} header is missing.")
        try:
            decoded = decode_header_value(_visible(header, raw))
        except ValueError:
            raise mismatch(f"the {header} header is not valid base64.") from None
        if not _same(annotation.type, decoded, value):
            raise mismatch(f"the {header} header differs from its argument.")
