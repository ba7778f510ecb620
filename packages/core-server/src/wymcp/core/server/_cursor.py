"""Opaque pagination cursors for the list methods."""

from __future__ import annotations

import base64
import binascii

from wymcp.core.server._jsonrpc import invalid_params

_PREFIX = "wymcp:"


def encode_cursor(offset: int) -> str:
    """The cursor that resumes a list at `offset`."""
    return base64.urlsafe_b64encode(f"{_PREFIX}{offset}".encode()).decode().rstrip("=")


def decode_cursor(cursor: object, total: int) -> int:
    """The offset a cursor names; -32602 for anything this server never sent."""
    if cursor is None:
        return 0
    invalid = invalid_params(
        "Invalid cursor. Send the nextCursor of a previous list, or none."
    )
    if not isinstance(cursor, str) or len(cursor) > 64:  # noqa: PLR2004 - far above any cursor we send
        raise invalid
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise invalid from None
    digits = raw.removeprefix(_PREFIX)
    if raw == digits or not digits.isdigit() or not 0 < int(digits) < total:
        raise invalid
    return int(digits)


def page(
    items: list[object], cursor: object, size: int
) -> tuple[list[object], str | None]:
    """One page of `items` and the cursor of the next page (None at the end)."""
    start = decode_cursor(cursor, len(items))
    end = start + size
    next_cursor = encode_cursor(end) if end < len(items) else None
    return items[start:end], next_cursor
