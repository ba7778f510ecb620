"""Decode one stdin line into JSON under wymcp's policy, and encode answers.

The policy is the HTTP transport's, `wymcp.core.server.decode_by_policy`
(docs/stdio.md). Answers are compact UTF-8 JSON, one line each, written by
msgspec as the HTTP transport writes them (`encode_json`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from wymcp.core.server import decode_by_policy, encode_json

_FAST_ENCODE = msgspec.json.Encoder().encode


def decode_line(line: bytes, *, depth_limit: int) -> Any:
    """Return the JSON value of `line`, or raise `BodyError` saying why not."""
    return decode_by_policy(
        line, depth_limit=depth_limit, subject="message", lines=False
    )


def encode_line(value: Any) -> bytes:
    """One message as compact UTF-8 JSON and a newline (none inside it).

    NaN and infinities are refused, as anything else JSON cannot carry, with
    the exception `json` raises.
    """
    return encode_json(value, fast=_FAST_ENCODE) + b"\n"
