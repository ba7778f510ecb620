"""RESULT_LIMIT: how big a tool's answer is, and the answer when it is too big.

The size is counted without encoding the result again: the UTF-8 bytes of
every string in the content blocks, plus the structured value's JSON text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring
from typing import Any, Final

_BLOCK_OVERHEAD: Final = 32
"""Bytes counted per block and per other value for keys, quotes and commas."""

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def text_size(value: str) -> int:
    """The bytes `value` takes as a JSON string: UTF-8, quotes and escapes.

    Plain ASCII text is measured without a copy; other text is escaped once.
    """
    plain = value.isascii() and value.isprintable()
    if plain and '"' not in value and "\\" not in value:
        return len(value) + 2
    escaped = encode_basestring(value)
    if escaped.isascii():
        return len(escaped)
    return len(escaped.encode("utf-8", "surrogatepass"))


def _size(value: object) -> int:
    if isinstance(value, str):
        return text_size(value) + _BLOCK_OVERHEAD
    if isinstance(value, Mapping):
        return _BLOCK_OVERHEAD + sum(
            text_size(str(k)) + _size(v) for k, v in value.items()
        )
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return _BLOCK_OVERHEAD + sum(_size(v) for v in value)
    return _BLOCK_OVERHEAD


def result_size(content: list[dict[str, Any]]) -> int:
    """About the bytes `content` takes as JSON (never less than its strings)."""
    return sum(_size(block) for block in content)


def too_large(tool: str, action: str | None, limit: int) -> dict[str, Any]:
    """The isError answer for a result over `limit` bytes; nothing of it is sent."""
    payload: dict[str, Any] = {"errorType": "result_too_large", "tool": tool}
    if action is not None:
        payload["action"] = action
    payload["limit"] = limit
    payload["message"] = (
        f"The tool's result takes more than {limit} bytes (RESULT_LIMIT) and was "
        "not sent. Ask for less (a filter, a page, a smaller range)."
    )
    return {"content": [{"type": "text", "text": _dumps(payload)}], "isError": True}
