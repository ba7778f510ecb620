"""The JSON answers the transport gives itself, before or around the engine.

Every one is a JSON-RPC error object with a fixed, short message: nothing the
caller sent is quoted, so each stays a few hundred bytes whatever arrived.
`docs/http.md` lists them all. An engine's `Reply` becomes a response here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from aiohttp import web

from wymcp.core.server import (
    INTERNAL_ERROR,
    EncodedJSON,
    Reply,
    echoable_id,
    encode_json,
    error_message,
)

__all__ = [
    "echoable_id",
    "encode",
    "error_response",
    "internal_error",
    "reply_response",
]


def _spliced(value: object) -> msgspec.Raw:
    """An `EncodedJSON` (a kept task result) goes into the answer as it is."""
    if isinstance(value, EncodedJSON):
        return msgspec.Raw(value.data)
    message = f"Object of type {type(value).__name__} is not JSON serializable"
    raise TypeError(message)


_FAST_ENCODE = msgspec.json.Encoder(enc_hook=_spliced).encode
_JSON_HEADERS = {"Content-Type": "application/json"}


def encode(value: Any) -> bytes:
    """Serialise a JSON value compactly (UTF-8; NaN and infinities refused).

    msgspec writes it, ten times faster than `json`; `encode_json` has `json`
    write again what msgspec may have got wrong or refused. Types JSON lacks
    that msgspec knows (datetime, UUID, Decimal, bytes, sets, dataclasses,
    attrs) are written as msgspec writes them; an `EncodedJSON` is copied.
    """
    return encode_json(value, fast=_FAST_ENCODE)


def error_response(
    status: int,
    code: int,
    message: str,
    *,
    rid: Any = None,
    headers: Mapping[str, str] | None = None,
    close: bool = False,
) -> web.Response:
    """An HTTP response carrying one JSON-RPC error."""
    response = web.Response(
        status=status,
        body=encode(error_message(rid, code, message)),
        content_type="application/json",
        headers=headers,
    )
    if close:
        response.force_close()
    return response


def internal_error(rid: Any = None) -> web.Response:
    """The answer to anything unexpected: bounded, no traceback, never a 500."""
    return error_response(
        200, INTERNAL_ERROR, "Internal error. The server logged the cause.", rid=rid
    )


def reply_response(reply: Reply) -> web.Response:
    """The engine's `Reply` as a response: its status, headers, and JSON body."""
    headers: Mapping[str, str] = reply.headers
    if reply.body is None:
        return web.Response(status=reply.status, headers=headers or None)
    if headers:
        headers = {**headers, "Content-Type": "application/json"}
    else:
        headers = _JSON_HEADERS
    body = encode_json(reply.body, fast=_FAST_ENCODE)  # `encode`, one call less
    return web.Response(status=reply.status, body=body, headers=headers)
