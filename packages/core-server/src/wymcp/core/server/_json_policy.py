"""wymcp's JSON policy for what a client sends, and the compact encoding of answers.

Both transports decode with `decode_by_policy` (docs/http.md step 8, docs/stdio.md)
and encode with `encode_json`; a transport may put a faster library in front
(`fast`), and `json` decides whatever that cannot vouch for.
"""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Callable
from itertools import accumulate
from typing import Any, Final

from wymcp.core.server._encoded_json import EncodedJSON

FastDecode = Callable[[bytes], tuple[bool, Any]]
"""A faster parser: (True, value), or (False, None) to leave the bytes to `json`.

It may raise `BodyError` for what it is sure breaks the policy."""
FastEncode = Callable[[Any], bytes]
"""A faster compact encoder; its output is used unless it holds a `null`."""

_STRING: Final = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"?', re.DOTALL)
"""A string, or an unterminated one running to the end of the body.

The closing quote is optional so that a match never fails: with it required,
an unterminated string made the search retry at every later quote, each try
scanning to the end (101 `[`, a quote, then 32,000 `\\"` took 35 s). The
quantifiers are possessive, so no backtracking state is kept: with plain ones
an escape-heavy string cost about 70 bytes of regex stack per body byte.
What an unterminated string swallows is inside a string for the parser
too, which refuses it.
"""
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")
_DEPTH_STEP: Final = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F]")
"""Where a surrogate escape may be (a cheap filter; escaped backslashes match too)."""


class BodyError(Exception):
    """The bytes are not JSON wymcp accepts; `reason` says why, without quoting them."""

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


_DECODER: Final = json.JSONDecoder(
    parse_constant=_refuse_constant,
    parse_float=_finite_float,
    object_pairs_hook=_unique_keys,
)
"""The policy's parser, built once: `json.loads` with hooks builds one per call."""


def nesting_depth(body: bytes) -> int:
    """Return how deeply arrays and objects nest in `body` (strings skipped).

    Linear in the length of `body`, with no regex backtracking state.
    """
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


def decode_by_policy(
    body: bytes,
    *,
    depth_limit: int,
    subject: str = "body",
    lines: bool = True,
    fast: FastDecode | None = None,
) -> Any:
    """Return the JSON value of `body`, or raise `BodyError` saying why not.

    Policy: strict UTF-8 (no BOM) and no escape naming a lone surrogate
    (U+D800 to U+DFFF), so every string is valid Unicode; no `NaN`,
    `Infinity` or numbers that overflow a float; integers up to Python's
    int-string limit (4,300 digits by default); nesting no deeper than
    `depth_limit`, checked before parsing so a deep body never recurses; a
    repeated object key refuses the whole body, so no two readers can see
    different values for it.

    Reasons name the input `subject` ("the body", "the message"); `lines`
    False leaves the line out of a syntax error's place (a one-line message).
    `fast` is tried after the depth check, before `json`.
    """
    opening = body.count(b"[") + body.count(b"{")  # an upper bound of the depth
    if opening > depth_limit and nesting_depth(body) > depth_limit:
        raise BodyError(f"the {subject} nests deeper than {depth_limit} levels.")
    if fast is not None:
        parsed, value = fast(body)
        if parsed:
            return value
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BodyError(f"the {subject} is not valid UTF-8.") from None
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        line = f"line {exc.lineno} " if lines else ""
        raise BodyError(
            f"the {subject} is not valid JSON ({exc.msg} at {line}column {exc.colno})."
        ) from None
    except ValueError as exc:  # Python's int-string limit
        if "digits" in str(exc):
            raise BodyError(
                "an integer has too many digits; send it as a string."
            ) from None
        raise BodyError(f"the {subject} is not valid JSON.") from None
    except RecursionError:  # a depth limit set above what the parser can take
        raise BodyError(f"the {subject} nests too deeply.") from None
    if _SURROGATE_ESCAPE.search(body):  # rare: only then walk the strings
        _refuse_lone_surrogates(value)
    return value


_ENCODER: Final = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False
)
"""Built once: `json.dumps` with options builds an encoder on every call."""
_NULL: Final = b"null"
_REFUSED: Final = (TypeError, ValueError, OverflowError, RecursionError)


def encode_json(value: Any, *, fast: FastEncode | None = None) -> bytes:
    """Serialise a JSON value compactly as UTF-8; NaN and infinities are refused.

    `fast` (msgspec's encoder, in the transports) writes it when it can. Such
    an encoder may write NaN and infinities as null, so output holding a null
    is written again by `json`, which refuses them; so is anything `fast`
    refuses, and `json` raises why (`TypeError`, `ValueError`, ...). An
    `EncodedJSON` inside `value` is copied as it is, never encoded again.
    """
    if fast is not None:
        try:
            data = fast(value)
        except _REFUSED:
            data = _NULL
        if _NULL not in data:
            return data
    try:
        return _ENCODER.encode(value).encode("utf-8")
    except TypeError:
        return _spliced(value)


def _spliced(value: Any) -> bytes:
    """`value` written by `json`, each `EncodedJSON` in it copied in as it is.

    Each is first written as a string naming it with a nonce made for this
    call (no value can hold it), then those strings are replaced in one pass.
    Raises `TypeError` when something else in `value` is not JSON.
    """
    parts: list[bytes] = []
    nonce = secrets.token_hex(16)

    def placeholder(item: object) -> str:
        if isinstance(item, EncodedJSON):
            parts.append(item.data)
            return f"{nonce}:{len(parts) - 1}"
        message = f"Object of type {type(item).__name__} is not JSON serializable"
        raise TypeError(message)

    encoder = json.JSONEncoder(
        ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=placeholder
    )
    data = encoder.encode(value).encode("utf-8")
    if not parts:
        return data
    named = re.compile(b'"' + nonce.encode() + rb':(\d+)"')
    return named.sub(lambda found: parts[int(found[1])], data)
