"""RESULT_LIMIT: how big a tool's answer is, and the answer when it is too big.

The size is counted without encoding the result again: the UTF-8 bytes of
every string in the content blocks, plus the structured value's JSON text. A
bound from string lengths alone settles most results without reading a string.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring
from typing import Any, Final

_BLOCK_OVERHEAD: Final = 32
"""Bytes counted per block and per other value for keys, quotes and commas."""
_MOST_PER_CHARACTER: Final = 6
"""The most bytes one character takes in a JSON string (`\\u001f`; UTF-8 takes 4)."""
_TEXT_BLOCK: Final = 3 * _BLOCK_OVERHEAD + len('"type""text""text"')
"""What `_size` counts for a text block besides its text."""
_TEXT_KEYS: Final = 2
"""A plain text block holds `type` and `text`, nothing more."""

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


def _bound(value: str) -> int:
    """At least the bytes `value` takes as a JSON string, from its length alone."""
    return _MOST_PER_CHARACTER * len(value) + 2


def text_within(text: str, structured: str | None, limit: int) -> bool:
    """Whether one plain text block holding `text` is within `limit` by its bound.

    Then `over_limit` answers None. `structured` is as for `over_limit`. The
    usual result (a structured value, its JSON the one text block) is settled
    so without walking its content.
    """
    bound = _TEXT_BLOCK + _MOST_PER_CHARACTER * len(text) + 2
    if structured is not None:
        bound += _bound(structured)
    return bound <= limit


def over_limit(
    content: list[dict[str, Any]], structured: str | None, limit: int
) -> int | None:
    """The size of a result over `limit` bytes, or None for one within it.

    `structured` is the JSON text of the result's structuredContent, if any.
    A bound from string lengths answers first; only a result it cannot place
    within the limit is counted exactly (`result_size`).
    """
    bound = 0 if structured is None else _bound(structured)
    for block in content:
        if bound > limit:
            break
        text = block.get("text")
        plain = len(block) == _TEXT_KEYS and block.get("type") == "text"
        if plain and text.__class__ is str:  # `_bound`, inlined: most blocks are text
            bound += _TEXT_BLOCK + _MOST_PER_CHARACTER * len(text) + 2
        else:
            bound += _size(block)
    if bound <= limit:
        return None
    size = result_size(content)
    if structured is not None:
        size += text_size(structured)
    return size if size > limit else None


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
