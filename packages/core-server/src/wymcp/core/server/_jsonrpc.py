"""JSON-RPC 2.0 messages: classifying what arrives, building what leaves.

A handler raises `RpcError`; the engine turns it into an error response with
the HTTP status its revision assigns (see docs/protocol.md).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from typing import Any, Final, Literal, TypeGuard

import attrs

from wymcp.core.gates import ECHO_LIMIT
from wymcp.core.server._exchange import JSONValue

PARSE_ERROR: Final = -32700
"""JSON-RPC: the body is not JSON."""
INVALID_REQUEST: Final = -32600
"""JSON-RPC: the body is JSON but not a request the server takes."""
METHOD_NOT_FOUND: Final = -32601
"""JSON-RPC: no such method (at this revision)."""
INVALID_PARAMS: Final = -32602
"""JSON-RPC: the method's params are wrong (docs/protocol.md lists when)."""
INTERNAL_ERROR: Final = -32603
"""JSON-RPC: the server failed to answer (a cap reached, a handler raised)."""
SESSION_NOT_FOUND: Final = -32001
RESOURCE_NOT_FOUND: Final = -32002
HEADER_MISMATCH: Final = -32020
MISSING_CAPABILITY: Final = -32021
UNSUPPORTED_VERSION: Final = -32022

RETRY_AFTER: Final = 5
"""Seconds a 503 (a limit reached: connections, sessions, streams) asks to wait."""

ID_TEXT_LIMIT: Final = 200
"""Longest string a request id or progress token may be (it is echoed)."""
ID_INT_LIMIT: Final = 2**63
"""A request id or progress token integer must be above -this and below it."""
_ID_RULE: Final = (
    f"a string of at most {ID_TEXT_LIMIT} characters or an integer "
    "between -2**63 and 2**63 (exclusive)"
)


def echo(text: str) -> str:
    """Cut a caller-sent string to `ECHO_LIMIT` characters."""
    if len(text) <= ECHO_LIMIT:
        return text
    return text[:ECHO_LIMIT] + "…"


class RpcError(Exception):
    """A JSON-RPC error a handler answers with.

    `status` forces an HTTP status; None lets the revision's table decide.
    `reason`, never sent, says why a limit refused it (the metrics' word).
    """

    def __init__(
        self,
        code: int,
        message: str,
        data: JSONValue = None,
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.status = status
        self.headers: Mapping[str, str] = headers or {}
        self.reason = reason

    def to_error(self) -> dict[str, JSONValue]:
        """The `error` member of the response."""
        error: dict[str, JSONValue] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def invalid_request(reason: str, status: int = 400) -> RpcError:
    """-32600 with a reason (HTTP 400 unless `status` says otherwise)."""
    return RpcError(
        INVALID_REQUEST, "Invalid Request", {"reason": reason}, status=status
    )


def invalid_params(reason: str, status: int | None = None) -> RpcError:
    """-32602 with a reason."""
    return RpcError(INVALID_PARAMS, "Invalid params", {"reason": reason}, status=status)


def refused_params(refusal: Mapping[str, JSONValue]) -> RpcError:
    """-32602 carrying a refusal payload, its `message` as the error message."""
    return RpcError(INVALID_PARAMS, str(refusal["message"]), dict(refusal))


def method_not_found(reason: str) -> RpcError:
    """-32601 with a reason."""
    return RpcError(METHOD_NOT_FOUND, "Method not found", {"reason": reason})


def header_mismatch(reason: str) -> RpcError:
    """-32020 (HTTP 400): a mirrored header differs from the body or is malformed."""
    return RpcError(HEADER_MISMATCH, f"Header mismatch: {reason}", status=400)


def unsupported_version(supported: list[str], requested: str) -> RpcError:
    """-32022 naming the supported versions and echoing the requested one, cut."""
    return RpcError(
        UNSUPPORTED_VERSION,
        "Unsupported protocol version",
        {"supported": supported, "requested": echo(requested)},
    )


def missing_capability(required: Mapping[str, JSONValue]) -> RpcError:
    """-32021 naming the client capabilities the request lacks."""
    return RpcError(
        MISSING_CAPABILITY,
        "Missing required client capability",
        {"requiredCapabilities": dict(required)},
    )


def internal_error(reason: str, **data: JSONValue) -> RpcError:
    """-32603 with a reason (and more data, e.g. the URI, already cut)."""
    return RpcError(INTERNAL_ERROR, "Internal error", {"reason": reason, **data})


def unavailable(message: str, retry_after: int, reason: str | None = None) -> RpcError:
    """-32603 with HTTP 503 and Retry-After: a limit is reached, retry later."""
    return RpcError(
        INTERNAL_ERROR,
        message,
        status=503,
        headers={"Retry-After": str(retry_after)},
        reason=reason,
    )


def session_terminated() -> RpcError:
    """-32001 (HTTP 404): the session named is gone or never was."""
    return RpcError(SESSION_NOT_FOUND, "Session terminated", status=404)


def sessions_not_served(supported: list[str]) -> RpcError:
    """-32600 (HTTP 400) to an `initialize` when no session revision is served."""
    return RpcError(
        INVALID_REQUEST,
        "This server serves 2026-07-28 only; it needs no initialize.",
        {"supported": supported},
        status=400,
    )


def resource_not_found(code: int, uri: str) -> RpcError:
    """`code` (the revision's) for a URI that names nothing, the URI cut."""
    return RpcError(code, "Resource not found", {"uri": echo(uri)})


@attrs.define
class Incoming:
    """One classified JSON-RPC message sent by the client.

    `kind` is "request", "notification" or "response"; a request's `id` is a
    string or an integer. Made per request and never changed (not frozen for
    speed, as `Exchange`).
    """

    kind: str
    method: str = ""
    id: str | int | None = None
    params: Mapping[str, Any] = attrs.field(factory=dict)
    result: JSONValue = None
    error: JSONValue = None

    @property
    def meta(self) -> Mapping[str, Any]:
        """`params._meta`, or an empty mapping when absent or not an object."""
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}


def valid_id(value: object) -> TypeGuard[str | int]:
    """Whether `value` is a JSON-RPC id wymcp accepts: a bounded string or integer.

    Ids (and progress tokens) are echoed in answers and notifications, so a
    longer one is refused rather than repeated.
    """
    if isinstance(value, str):
        return len(value) <= ID_TEXT_LIMIT
    if isinstance(value, int) and not isinstance(value, bool):
        return -ID_INT_LIMIT < value < ID_INT_LIMIT
    return False


def _oversized_token(params: dict[str, Any]) -> bool:
    """Whether `_meta.progressToken` is a string or integer past the id bounds."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return False
    token = meta.get("progressToken")
    is_key = isinstance(token, str) or (
        isinstance(token, int) and not isinstance(token, bool)
    )
    return is_key and not valid_id(token)


def request_id_of(body: object) -> str | int | None:
    """The id an error answer may echo: a valid id of a request-shaped body."""
    if isinstance(body, dict) and "method" in body:
        candidate = body.get("id")
        if valid_id(candidate):
            return candidate
    return None


_ASKED_ID: Final = re.compile(r"srv-[A-Za-z0-9_-]{11}")
"""The id of a question asked at 2025: `srv-` and 8 random bytes, base64url."""

Held = Literal["a", "c"]
"""What a client message reaches on the worker holding it: "a", the question it
answers (in `Session.pending`); "c", the call it cancels (`Session.in_flight`)."""


def asked_id() -> str:
    """A new id for a question this server asks a 2025 client."""
    return f"srv-{secrets.token_urlsafe(8)}"


def is_asked_id(value: object) -> bool:
    """Whether `value` has the shape of an id `asked_id` makes.

    A response whose id has another shape answers nothing this server asked.
    """
    return isinstance(value, str) and _ASKED_ID.fullmatch(value) is not None


def answered_or_cancelled(body: object) -> tuple[Held, str | int] | None:
    """What a client message answers or cancels, if it may be held elsewhere.

    An answer (a response) to an id of the shape this server asks with, or
    `notifications/cancelled` naming a valid request id; None for any other.
    With `Session.holds` it tells a broker a message is for another worker.
    """
    if not isinstance(body, dict):
        return None
    if "method" not in body:
        rid = body.get("id")
        return ("a", rid) if isinstance(rid, str) and is_asked_id(rid) else None
    if body.get("method") == "notifications/cancelled":
        params = body.get("params")
        rid = params.get("requestId") if isinstance(params, dict) else None
        if isinstance(rid, int) and not isinstance(rid, bool):
            return "c", rid
        if isinstance(rid, str) and len(rid) <= ID_TEXT_LIMIT:
            return "c", rid
    return None


def classify(body: object) -> Incoming:
    """Classify a decoded body into a request, notification or response.

    Anything else (a batch included) raises `RpcError` -32600.
    """
    if not isinstance(body, dict):
        raise _not_an_object(body)
    if body.get("jsonrpc") != "2.0":
        raise invalid_request("'jsonrpc' must be \"2.0\".")
    if "method" not in body:
        return _classify_response(body)
    # a request or a notification, read here (one call less per request)
    method = body["method"]
    if not isinstance(method, str):
        raise invalid_request("'method' must be a string.")
    # no `{}` made as a default per request: only when params is absent or null
    params = body.get("params")
    if params.__class__ is not dict:
        params = _params_of(params)
    if "id" not in body:
        return Incoming("notification", method, None, params)
    rid = body["id"]
    # `valid_id`, inlined for the usual ids (a small integer, a short string)
    kind = type(rid)
    if not (
        (kind is int and -ID_INT_LIMIT < rid < ID_INT_LIMIT)
        or (kind is str and len(rid) <= ID_TEXT_LIMIT)
        or valid_id(rid)
    ):
        raise invalid_request(f"'id' must be {_ID_RULE}.")
    meta = params.get("_meta")
    if isinstance(meta, dict) and "progressToken" in meta and _oversized_token(params):
        raise invalid_request(f"'_meta.progressToken' must be {_ID_RULE}.")
    # a request's fields set here, as `build_call` sets a Call's: calling the
    # class costs a tuple and a frame more (tests/core_server/test_call_fields.py)
    incoming: Incoming = _new(Incoming)
    incoming.kind = "request"
    incoming.method = method
    incoming.id = rid
    incoming.params = params
    incoming.result = None
    incoming.error = None
    return incoming


_new: Final = object.__new__


def _params_of(params: object) -> dict[str, Any]:
    """`params` other than a plain object: absent or null is `{}`, else -32600."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise invalid_request("'params' must be an object.")
    return params


def _not_an_object(body: object) -> RpcError:
    """-32600 for a body that is not one message object (a batch included)."""
    if isinstance(body, list):
        return invalid_request(
            "Batches are not supported. Send one message per request."
        )
    return invalid_request("The body must be one JSON-RPC message object.")


def _classify_response(body: dict[str, Any]) -> Incoming:
    """A response (an `id`, and a `result` or an `error`); -32600 for anything else."""
    if "id" not in body or ("result" in body) == ("error" in body):
        raise invalid_request("Not a request, a notification or a response.")
    rid = body["id"]
    if not valid_id(rid):
        raise invalid_request(f"'id' must be {_ID_RULE}.")
    return Incoming(
        kind="response", id=rid, result=body.get("result"), error=body.get("error")
    )


def echoable_id(body: JSONValue) -> str | int | None:
    """The id of a message as sent, to echo in an error: None if unusable."""
    if not isinstance(body, dict):
        return None
    rid = body.get("id")
    return rid if valid_id(rid) else None


def request_message(
    rid: str | int | None, method: str, params: JSONValue = None
) -> dict[str, JSONValue]:
    """A request message (`params` left out when None)."""
    message: dict[str, JSONValue] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return message


def error_message(
    rid: str | int | None, code: int, message: str
) -> dict[str, JSONValue]:
    """An error response with a fixed message and no data; `id` null when unknown.

    What a transport answers by itself (a parse error, an internal error).
    """
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def response(rid: str | int | None, result: JSONValue) -> dict[str, JSONValue]:
    """A result response."""
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def rpc_error_message(rid: str | int | None, error: RpcError) -> dict[str, JSONValue]:
    """The error response of an `RpcError` (the id is omitted when unknown)."""
    message: dict[str, JSONValue] = {"jsonrpc": "2.0"}
    if rid is not None:
        message["id"] = rid
    message["error"] = error.to_error()
    return message


def notification(method: str, params: JSONValue = None) -> dict[str, JSONValue]:
    """A notification message."""
    message: dict[str, JSONValue] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message
