"""Decode a request body into JSON under wymcp's policy, msgspec first.

The policy is `wymcp.core.server.decode_by_policy` (and docs/http.md, step 8).
msgspec parses a body of up to 64 KiB first; anything it refuses, or the fast
path cannot vouch for, is parsed by `json` under hooks that give the reasons.
"""

from __future__ import annotations

import sys
from typing import Any

import msgspec

from wymcp.core.server import BodyError, decode_by_policy, nesting_depth

__all__ = ["BodyError", "decode_json", "nesting_depth"]

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

    The policy is `wymcp.core.server.decode_by_policy`'s; msgspec answers first.
    A body that opens no more arrays and objects than `depth_limit` cannot
    nest deeper, so the policy's depth check passes and `_fast_decode` is
    tried here at once; the policy decides anything else.
    """
    if body.count(b"[") + body.count(b"{") <= depth_limit:
        parsed, value = _fast_decode(body)
        if parsed:
            return value
        return decode_by_policy(body, depth_limit=depth_limit)
    return decode_by_policy(body, depth_limit=depth_limit, fast=_fast_decode)
