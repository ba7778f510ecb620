"""The compact JSON the broker writes to Redis (task messages, relayed bodies).

msgspec writes it, as the HTTP transport writes its answers; `encode_json`
(wymcp's policy) has `json` write again what msgspec may have got wrong.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from wymcp.core.server import EncodedJSON, encode_json


def _spliced(value: object) -> msgspec.Raw:
    """An `EncodedJSON` (a kept task result) goes in as it is, never re-encoded."""
    if isinstance(value, EncodedJSON):
        return msgspec.Raw(value.data)
    message = f"Object of type {type(value).__name__} is not JSON serializable"
    raise TypeError(message)


_FAST_ENCODE: Final = msgspec.json.Encoder(enc_hook=_spliced).encode


def encode(value: Any) -> bytes:
    """Serialise a JSON value compactly (UTF-8; NaN and infinities refused)."""
    return encode_json(value, fast=_FAST_ENCODE)
