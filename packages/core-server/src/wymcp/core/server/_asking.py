"""Asking the client (elicitation, sampling, roots) at each revision.

At 2025 a question is a JSON-RPC request on the call's SSE stream, answered
by a POSTed response. At 2026-07-28 it is an `input_required` result the
client answers by retrying the request with `inputResponses`.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from wymcp.core.server._call import Call, invalid_params
from wymcp.core.server._context import (
    CAPABILITY_OF,
    Asker,
    ClientRequestError,
    InputRequest,
    MissingCapabilityError,
    ToolContext,
)
from wymcp.core.server._exchange import Stream
from wymcp.core.server._jsonrpc import MISSING_CAPABILITY, RpcError
from wymcp.core.server._options import EngineOptions
from wymcp.core.server._revision import META_LOG_LEVEL, has_titles
from wymcp.core.server._session import Session
from wymcp.core.server._state import StateError, seal, unseal
from wymcp.core.server._toolcall import InputRequired


def modern_asker(
    capabilities: Mapping[str, Any],
    responses: Mapping[str, Any],
    seal: Callable[[Any], str],
) -> Asker:
    """Answer from `responses`, or end the call with an input_required result."""

    async def ask(
        requests: dict[str, InputRequest], state: Any
    ) -> dict[str, dict[str, Any]]:
        missing: dict[str, Any] = {
            CAPABILITY_OF[r.method]: {}
            for r in requests.values()
            if CAPABILITY_OF.get(r.method, r.method) not in capabilities
        }
        if missing:
            raise MissingCapabilityError(missing)
        answers: dict[str, dict[str, Any]] = {}
        pending: dict[str, InputRequest] = {}
        for key, request in requests.items():
            response = responses.get(key)
            if isinstance(response, dict):
                answers[key] = response
            else:
                pending[key] = request
        if pending:
            result: dict[str, Any] = {
                "resultType": "input_required",
                "inputRequests": {k: r.to_json() for k, r in pending.items()},
            }
            if state is not None:
                result["requestState"] = seal(state)
            raise InputRequired(result)
        return answers

    return ask


def session_asker(session: Session, stream: Stream, timeout: float) -> Asker:
    """Send each question as a request on the call's stream and await it."""

    async def one(request: InputRequest) -> dict[str, Any]:
        needed = CAPABILITY_OF.get(request.method)
        if (
            needed is None
            or needed not in session.client_capabilities
            or (needed == "elicitation" and not has_titles(session.protocol_version))
        ):
            raise ClientRequestError(
                "not_supported",
                f"The client did not declare the '{needed}' capability.",
            )
        rid = f"srv-{secrets.token_urlsafe(8)}"
        future: asyncio.Future[dict[str, Any]] = (
            asyncio.get_running_loop().create_future()
        )
        session.pending[rid] = future
        try:
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
            message.update(request.to_json())
            try:
                await stream.send(message)
            except Exception:  # noqa: BLE001 - the client went away
                raise ClientRequestError(
                    "disconnected", "The client's stream is gone."
                ) from None
            try:
                return await asyncio.wait_for(future, timeout)
            except TimeoutError:
                raise ClientRequestError(
                    "timeout", "The client did not answer in time."
                ) from None
            except asyncio.CancelledError:
                if session.closed:
                    raise ClientRequestError(
                        "disconnected", "The session ended."
                    ) from None
                raise
        finally:
            session.pending.pop(rid, None)

    async def ask(
        requests: dict[str, InputRequest], state: Any
    ) -> dict[str, dict[str, Any]]:
        del state
        return {key: await one(request) for key, request in requests.items()}

    return ask


def _round(
    call: Call, target: str, secret: bytes, now: float
) -> tuple[Any, Mapping[str, Any]]:
    """The verified state and the responses of a 2026 retry."""
    if not call.modern:
        return None, {}
    responses = call.params.get("inputResponses")
    if responses is None:
        responses = {}
    if not isinstance(responses, dict):
        raise invalid_params("inputResponses must be an object.")
    token = call.params.get("requestState")
    if token is None:
        return None, responses
    try:
        state = unseal(secret, token, target=target, principal=call.principal, now=now)
    except StateError:
        raise invalid_params(
            "Invalid requestState: it is malformed, altered, meant for "
            "another request, or expired. Start the request again."
        ) from None
    return state, responses


def build_context(
    call: Call,
    target: str,
    *,
    secret: bytes,
    options: EngineOptions,
    server: object,
) -> ToolContext:
    """The `ctx` of one call; `target` ("tools/call:name") binds its state."""
    session = call.session
    now = options.wall_clock()
    state, responses = _round(call, target, secret, now)
    asker: Asker | None = None
    if call.modern:
        level = call.meta.get(META_LOG_LEVEL)
        log_enabled = level is not None
        threshold = level if isinstance(level, str) else None
        principal = call.principal
        expires = now + options.state_ttl

        def sealer(value: Any) -> str:
            return seal(
                secret, value, target=target, principal=principal, expires=expires
            )

        asker = modern_asker(call.capabilities, responses, sealer)
    else:
        log_enabled = True
        threshold = session.log_level if session is not None else None
        if session is not None and call.stream is not None:
            asker = session_asker(session, call.stream, options.client_request_timeout)
    return ToolContext(
        request_id=call.id,
        session_id=session.id if session is not None else None,
        protocol_version=call.version,
        meta=call.meta,
        principal=call.principal,
        client_capabilities=call.capabilities,
        stream=call.stream,
        log_enabled=log_enabled,
        log_threshold=threshold,
        asker=asker,
        request_state=state,
        server=server,
    )


async def answer_asking(run: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    """Run a handler that may ask the client.

    It answers its input_required result, or -32021 for a capability the
    request did not declare.
    """
    try:
        return await run
    except (InputRequired, MissingCapabilityError) as asked:
        return asking_result(asked)


def asking_result(asked: InputRequired | MissingCapabilityError) -> dict[str, Any]:
    """The input_required result; -32021 for a capability not declared."""
    if isinstance(asked, InputRequired):
        return asked.result
    raise RpcError(
        MISSING_CAPABILITY,
        "Missing required client capability",
        {"requiredCapabilities": asked.required},
    ) from None
