"""The JSON answers the transport gives itself, before or around the engine.

Every one is a JSON-RPC error object with a fixed, short message: nothing the
caller sent is quoted, so each stays a few hundred bytes whatever arrived.
`docs/http.md` lists them all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from aiohttp import web
from wymcp.core.server import encode_json

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
_ID_TEXT_LIMIT = 200
_ID_INT_LIMIT = 2**63


_FAST_ENCODE = msgspec.json.Encoder().encode


def encode(value: Any) -> bytes:
    """Serialise a JSON value compactly (UTF-8; NaN and infinities refused).

    msgspec writes it, ten times faster than `json`; `encode_json` has `json`
    write again what msgspec may have got wrong or refused. Types JSON lacks
    that msgspec knows (datetime, UUID, Decimal, bytes, sets, dataclasses,
    attrs) are written as msgspec writes them.
    """
    return encode_json(value, fast=_FAST_ENCODE)


def echoable_id(body: Any) -> Any:
    """Return the request id to echo in an error, or None if unusable or large."""
    if not isinstance(body, dict):
        return None
    rid = body.get("id")
    if isinstance(rid, str) and len(rid) <= _ID_TEXT_LIMIT:
        return rid
    if isinstance(rid, int) and not isinstance(rid, bool) and abs(rid) < _ID_INT_LIMIT:
        return rid
    return None


def error_payload(code: int, message: str, rid: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response object."""
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


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
        body=encode(error_payload(code, message, rid)),
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
