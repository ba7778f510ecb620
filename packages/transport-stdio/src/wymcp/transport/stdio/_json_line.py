"""Decode one stdin line into JSON under wymcp's policy, and encode answers.

The policy is the HTTP transport's (docs/http.md, step 8; docs/stdio.md):
strict UTF-8, no NaN or infinities, no repeated keys, no lone surrogates,
nesting checked before parsing. Answers are compact UTF-8 JSON, one line each.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Any

import msgspec

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_DEPTH_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class LineError(Exception):
    """The line is not JSON wymcp accepts; `reason` says why, without quoting it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _refuse_constant(name: str) -> Any:
    raise LineError(f"{name} is not a JSON number; send a finite number.")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise LineError("a number is too large for a double-precision float.")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise LineError("an object repeats a key; send each key once.")
    return obj


_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant,
    parse_float=_finite_float,
    object_pairs_hook=_unique_keys,
)


def _nesting_depth(line: bytes) -> int:
    brackets = _STRING.sub(b"", line).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    return max(accumulate(step - 1 for step in brackets.translate(_DEPTH_STEP)))


def decode_line(line: bytes, *, depth_limit: int) -> Any:
    """Return the JSON value of `line`, or raise `LineError` saying why not."""
    opening = line.count(b"[") + line.count(b"{")  # an upper bound of the depth
    if opening > depth_limit and _nesting_depth(line) > depth_limit:
        raise LineError(f"the message nests deeper than {depth_limit} levels.")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise LineError("the message is not valid UTF-8.") from None
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise LineError(
            f"the message is not valid JSON ({exc.msg} at column {exc.colno})."
        ) from None
    except ValueError as exc:  # Python's int-string limit
        if "digits" in str(exc):
            raise LineError(
                "an integer has too many digits; send it as a string."
            ) from None
        raise LineError("the message is not valid JSON.") from None
    except RecursionError:
        raise LineError("the message nests too deeply.") from None
    if _SURROGATE_ESCAPE.search(line):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise LineError(
                "a \\u escape names a lone surrogate (D800-DFFF), which is not "
                "Unicode; send each surrogate pair whole."
            ) from None
    return value


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_FAST_ENCODER = msgspec.json.Encoder()
_NULL = b"null"
_REFUSED = (TypeError, ValueError, OverflowError, RecursionError)


def encode_line(value: Any) -> bytes:
    """One message as compact UTF-8 JSON and a newline (none inside it).

    msgspec writes it, as the HTTP transport does (NaN and infinities it
    would write as null are refused by `json`, which raises why).
    """
    try:
        data = _FAST_ENCODER.encode(value)
    except _REFUSED:
        data = _NULL
    if _NULL in data:
        data = _ENCODER.encode(value).encode("utf-8")
    return data + b"\n"
