"""The JSON answers the transport gives itself, before or around the engine.

Every one is a JSON-RPC error object with a fixed, short message: nothing the
caller sent is quoted, so each stays a few hundred bytes whatever arrived.
`docs/http.md` lists them all. An engine's `Reply` becomes a response here too.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any, Final

import msgspec
from aiohttp import payload, web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.compression_utils import MAX_SYNC_CHUNK_SIZE
from multidict import CIMultiDict

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
_JSON_MULTIDICT: Final = CIMultiDict(_JSON_HEADERS)
"""Copied per answer (a copy of a multidict costs half a build from a dict)."""
_REASONS: Final = {status.value: status.phrase for status in HTTPStatus}
SHARED_FROM: Final = 64 * 1024
"""A kept result this large is written from its own bytes, never copied."""
SHARED_SLICE: Final = 64 * 1024
"""The bytes of a kept result handed to the connection at a time."""


class _SharedBody(payload.Payload):
    """An answer around a kept result: its envelope, then the kept bytes.

    The kept bytes are the store's own (`EncodedJSON.data`): each answer
    hands the connection a slice of at most `SHARED_SLICE` bytes and waits
    for the client to take it, so N unread polls of one result hold the
    result once plus N small envelopes and slices, not N copies (issue 29,
    attack F1: 26.9 MiB per unread poll of a 15 MiB result before).
    """

    _autoclose = True

    def __init__(self, head: bytes, kept: bytes, tail: bytes) -> None:
        super().__init__(kept, content_type="application/json")
        self._head = head
        self._tail = tail
        self._size = len(head) + len(kept) + len(tail)

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        """The whole answer as text (aiohttp's contract; never used to send)."""
        whole: bytes = self._head + self._value + self._tail
        return whole.decode(encoding, errors)

    async def write(self, writer: AbstractStreamWriter) -> None:
        """Write the envelope and the kept bytes slice by slice, draining."""
        await writer.write(self._head)
        kept = memoryview(self._value)
        for start in range(0, len(kept), SHARED_SLICE):
            await writer.write(kept[start : start + SHARED_SLICE])
        await writer.write(self._tail)


class _JsonResponse(web.Response):
    """A `web.Response` of JSON bytes, set up the way `Response.__init__` sets one.

    `Response.__init__` takes its general path (text or body, content type
    and charset, a payload lookup) for every answer: about 12k instructions,
    against under 5k here for the same fields, set to the same values
    (`tests/transport_aiohttp/test_answers.py` compares the two, field by
    field, so an aiohttp that adds one fails there, not in production).
    """

    def __init__(self, status: int, body: bytes, headers: CIMultiDict[str]) -> None:
        # what StreamResponse.__init__ and Response.__init__ set, in their order
        self._state = {}
        self._headers = headers
        self._status = status
        self._reason = _REASONS.get(status, "")
        self._body = body
        self._compressed_body = None
        self._zlib_executor_size = MAX_SYNC_CHUNK_SIZE
        self._zlib_executor = None


def _shared_body(body: Any) -> _SharedBody | None:
    """A `tasks/get` answer carrying a large kept result, split around it."""
    if not isinstance(body, dict):
        return None
    result = body.get("result")
    if not isinstance(result, dict):
        return None
    kept = result.get("result")
    if not isinstance(kept, EncodedJSON) or len(kept.data) < SHARED_FROM:
        return None
    marker = secrets.token_hex(16)  # no other string of the answer holds it
    shell = {**body, "result": {**result, "result": marker}}
    head, found, tail = encode_json(shell, fast=_FAST_ENCODE).partition(
        b'"' + marker.encode() + b'"'
    )
    if not found:  # pragma: no cover - a hex string is written as it is
        return None
    return _SharedBody(head, kept.data, tail)


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
    shared = _shared_body(reply.body)
    if shared is not None:
        return web.Response(
            status=reply.status,
            body=shared,
            headers={**headers, "Content-Type": "application/json"},
        )
    body = encode_json(reply.body, fast=_FAST_ENCODE)  # `encode`, one call less
    if headers:
        sent = CIMultiDict(headers)
        sent["Content-Type"] = "application/json"
    else:
        sent = _JSON_MULTIDICT.copy()
    return _JsonResponse(reply.status, body, sent)
