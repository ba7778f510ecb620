"""The `Mcp-Param-*` header value codec of MCP 2026-07-28 (`=?base64?…?=`)."""

from __future__ import annotations

import base64
import binascii
import re

_PLAIN = re.compile(r"[\x20-\x7e]*")
_SENTINEL = re.compile(r"=\?base64\?(?P<payload>.*)\?=", re.DOTALL)


def encode_header_value(value: str | int | bool) -> str:  # noqa: FBT001 - a JSON scalar
    """Render a body value as an `Mcp-Param-*` header value.

    A boolean reads `true`/`false`, an integer its decimal digits; a string goes
    as is when it is plain visible ASCII without edge whitespace and does not look like
    the sentinel, otherwise base64-wrapped as `=?base64?…?=` (UTF-8).
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if (
        _PLAIN.fullmatch(value)
        and value == value.strip()
        and not _SENTINEL.fullmatch(value)
    ):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def decode_header_value(raw: str) -> str:
    """Decode an `Mcp-Param-*` header value.

    A value without the full sentinel is literal. A sentinel must carry canonical,
    padded base64 of UTF-8 text; anything else raises `ValueError`.
    """
    match = _SENTINEL.fullmatch(raw)
    if match is None:
        return raw
    payload = match.group("payload")
    try:
        decoded = base64.b64decode(payload.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as error:
        raise ValueError(
            "the =?base64?...?= header value is not valid base64"
        ) from error
    if base64.b64encode(decoded).decode("ascii") != payload:
        raise ValueError("the =?base64?...?= header value is not canonical base64")
    try:
        return decoded.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError("the =?base64?...?= header value is not UTF-8") from error
