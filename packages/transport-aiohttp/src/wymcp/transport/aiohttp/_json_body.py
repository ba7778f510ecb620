"""Decode a request body into JSON under wymcp's policy, or say why not.

The policy is `decode_json`'s docstring (and docs/http.md, step 8). msgspec
parses a body of up to 64 KiB first; anything it refuses, or the fast path
cannot vouch for, is parsed by `json` under hooks that give the reasons.
"""

from __future__ import annotations

import json
import math
import re
import sys
from itertools import accumulate
from typing import Any

import msgspec

_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"?', re.DOTALL)
"""A string, or an unterminated one running to the end of the body.

The closing quote is optional so that a match never fails: with it required,
an unterminated string made the search retry at every later quote, each try
scanning to the end (101 `[`, a quote, then 32,000 `\\"` took 35 s). The
quantifiers are possessive, so no backtracking state is kept: with plain ones
an escape-heavy string cost about 70 bytes of regex stack per body byte.
What an unterminated string swallows is inside a string for the parser
too, which refuses it.
"""
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_DEPTH_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""Where a surrogate escape may be (a cheap filter; escaped backslashes match too)."""
_COLON_ESCAPE = b"\\u003"
"""Prefix of `\\u003a`: a body holding it is not counted (see `_fast_decode`)."""
_FAST_INT_DIGITS = 4300
"""msgspec's fixed integer limit; the fast path runs while Python's is no lower."""
_FAST_BODY_LIMIT = 64 * 1024
"""Larger bodies go the `json` way: msgspec makes a new object for every
one-character string (`json` shares Python's cached ones), so a 4 MB body of
"x" items would peak at four times the memory."""
_FAST_DECODER = msgspec.json.Decoder()
_FAST_ENCODER = msgspec.json.Encoder()


class BodyError(Exception):
    """The body is not JSON wymcp accepts; `reason` says why, without quoting it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _refuse_constant(name: str) -> Any:
    raise BodyError(f"{name} is not a JSON number; send a finite number.")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BodyError("a number is too large for a double-precision float.")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise BodyError("an object repeats a key; send each key once.")
    return obj


_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant,
    parse_float=_finite_float,
    object_pairs_hook=_unique_keys,
)
"""The policy's parser, built once: `json.loads` with hooks builds one per call."""


def nesting_depth(body: bytes) -> int:
    """Return how deeply arrays and objects nest in `body` (strings skipped)."""
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    steps = brackets.translate(_DEPTH_STEP)
    return max(accumulate(step - 1 for step in steps))


def _refuse_lone_surrogates(value: Any) -> None:
    """Raise `BodyError` if a string or key of `value` holds a lone surrogate.

    Such a string is valid JSON text but not Unicode: it cannot be encoded
    as UTF-8, so any answer that quotes it would fail to serialise.
    """
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise BodyError(
            "a \\u escape names a lone surrogate (D800-DFFF), which is not "
            "Unicode; send each surrogate pair whole."
        ) from None


def _fast_decode(body: bytes) -> tuple[bool, Any]:
    """Parse `body` with msgspec: (True, value), or (False, None) to go slow.

    msgspec is strict UTF-8 and JSON, refuses NaN, overflowing floats, lone
    surrogates and integers over 4,300 digits, but keeps the last of
    repeated keys. So the colons of the body are counted against those of
    the value re-encoded: every key of the body brings one colon, and a
    dropped duplicate takes at least its own with it. Colons inside strings
    appear in both, unless the body escaped one (U+003A as an escape): such a body
    (rare) goes the slow way.
    """
    limit = sys.get_int_max_str_digits()
    if (
        len(body) > _FAST_BODY_LIMIT
        or (limit and limit < _FAST_INT_DIGITS)
        or _COLON_ESCAPE in body
    ):
        return False, None
    try:
        value = _FAST_DECODER.decode(body)
    except (msgspec.DecodeError, RecursionError):
        return False, None
    if body.count(b":") != _FAST_ENCODER.encode(value).count(b":"):
        raise BodyError("an object repeats a key; send each key once.")
    return True, value


def decode_json(body: bytes, *, depth_limit: int) -> Any:
    """Return the JSON value of `body`, or raise `BodyError` saying why not.

    Policy: strict UTF-8 (no BOM) and no escape naming a lone surrogate
    (U+D800 to U+DFFF), so every string is valid Unicode; no `NaN`,
    `Infinity` or numbers that overflow a float; integers up to Python's
    int-string limit (4,300 digits by default); nesting no deeper than
    `depth_limit`, checked before parsing so a deep body never recurses; a
    repeated object key refuses the whole body, so no two readers can see
    different values for it.
    """
    opening = body.count(b"[") + body.count(b"{")  # an upper bound of the depth
    if opening > depth_limit and nesting_depth(body) > depth_limit:
        raise BodyError(f"the body nests deeper than {depth_limit} levels.")
    parsed, value = _fast_decode(body)
    if parsed:
        return value
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BodyError("the body is not valid UTF-8.") from None
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise BodyError(
            f"the body is not valid JSON ({exc.msg} at line {exc.lineno} "
            f"column {exc.colno})."
        ) from None
    except ValueError as exc:  # Python's int-string limit
        if "digits" in str(exc):
            raise BodyError(
                "an integer has too many digits; send it as a string."
            ) from None
        raise BodyError("the body is not valid JSON.") from None
    except RecursionError:  # a depth limit set above what the parser can take
        raise BodyError("the body nests too deeply.") from None
    if _SURROGATE_ESCAPE.search(body):  # rare: only then walk the strings
        _refuse_lone_surrogates(value)
    return value
