"""Shared test kit for the engine: a fake Stream, request builders and the
official-schema oracle every server message is checked against.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from schema_oracle import MODERN, REQUESTS, RESULTS, validator
from wymcp.core.server import Engine, EngineOptions, Exchange, Headers, Reply

NOTIFICATIONS = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
    "notifications/cancelled": "CancelledNotification",
}


def validate(revision: str, definition: str, value: object) -> None:
    """Raise when `value` is not a valid `definition` of `revision`."""
    errors = sorted(
        validator(revision, definition).iter_errors(value), key=lambda e: e.path
    )
    assert not errors, f"{definition}@{revision}: {errors[0].message[:300]}"


def validate_message(revision: str, message: Any, method: str | None) -> None:
    """Check one server message against the official schema of `revision`."""
    assert isinstance(message, dict)
    if "method" in message:
        if "id" in message:
            validate(revision, REQUESTS[message["method"]], message)
        else:
            definition = NOTIFICATIONS.get(message["method"], "JSONRPCNotification")
            validate(revision, definition, message)
        return
    if "error" in message:
        validate(revision, "JSONRPCErrorResponse", message)
        return
    validate(revision, "JSONRPCResultResponse", message)
    result = message["result"]
    if revision == MODERN and result.get("resultType") == "input_required":
        validate(revision, "InputRequiredResult", result)
    elif method in RESULTS:
        validate(revision, RESULTS[method], result)


class FakeStream:
    """The transport's Stream, recording what the engine writes."""

    def __init__(self, *, fail: bool = False) -> None:
        self.opened = False
        self.open_headers: dict[str, str] = {}
        self.events: list[tuple[Any, str | None]] = []
        self.fail = fail

    async def open(self, headers: Mapping[str, str] | None = None) -> None:
        if not self.opened:
            self.opened = True
            self.open_headers = dict(headers or {})

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        if self.fail:
            raise ConnectionResetError("gone")
        await self.open()
        self.events.append((message, event_id))

    @property
    def messages(self) -> list[Any]:
        return [m for m, _ in self.events if m is not None]


def modern_meta(**extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    meta.update(extra)
    return meta


def modern_request(
    method: str,
    params: dict[str, Any] | None = None,
    rid: Any = 1,
    *,
    meta: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """A 2026-07-28 request and the headers a conforming client sends."""
    body_params = dict(params or {})
    body_params["_meta"] = meta if meta is not None else modern_meta()
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": body_params}
    headers = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)]
    if method in ("tools/call", "prompts/get") and isinstance(
        body_params.get("name"), str
    ):
        headers.append(("Mcp-Name", body_params["name"]))
    if method == "resources/read" and isinstance(body_params.get("uri"), str):
        headers.append(("Mcp-Name", body_params["uri"]))
    return body, headers


class Wire:
    """Drives an engine and checks every message it sends against the schema."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    Stream = FakeStream
    request = staticmethod(modern_request)
    meta = staticmethod(modern_meta)
    validate = staticmethod(validate_message)

    @staticmethod
    def result_json(reply: Reply) -> Any:
        """The JSON text of a tools/call answer's first block."""
        return json.loads(reply.body["result"]["content"][0]["text"])

    async def post(
        self,
        body: Any,
        headers: list[tuple[str, str]] | None = None,
        *,
        stream: FakeStream | None = None,
        revision: str = MODERN,
        principal: object | None = None,
    ) -> tuple[Reply, FakeStream]:
        stream = stream or FakeStream()
        exchange = Exchange(
            method="POST",
            headers=Headers.of(headers or []),
            body=body,
            principal=principal,
        )
        reply = await self.engine.post(exchange, stream)
        method = body.get("method") if isinstance(body, dict) else None
        for message in stream.messages:
            validate_message(revision, message, method)
        if reply.body is not None and "jsonrpc" in reply.body:
            validate_message(revision, reply.body, method)
        return reply, stream

    async def modern(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        rid: Any = 1,
        *,
        meta: dict[str, Any] | None = None,
        extra_headers: list[tuple[str, str]] | None = None,
        stream: FakeStream | None = None,
    ) -> tuple[Reply, FakeStream]:
        body, headers = modern_request(method, params, rid, meta=meta)
        return await self.post(body, headers + (extra_headers or []), stream=stream)

    async def open_session(
        self, version: str = "2025-11-25", *, principal: object | None = None
    ) -> tuple[Reply, FakeStream]:
        """Send a bare `initialize` (no capabilities, no clientInfo) and return
        what `post` returns, without sending `notifications/initialized`."""
        return await self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": version},
            },
            revision=version,
            principal=principal,
        )

    async def initialize(
        self, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None
    ) -> str:
        reply, _ = await self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": capabilities or {},
                    "clientInfo": {"name": "test", "version": "1.0"},
                },
            },
            revision=version,
        )
        assert reply.status == 200
        sid = reply.headers["Mcp-Session-Id"]
        initialized, _ = await self.post(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            [("Mcp-Session-Id", sid), ("MCP-Protocol-Version", version)],
            revision=version,
        )
        assert initialized.status == 202
        return sid

    async def session(
        self,
        sid: str,
        method: str,
        params: dict[str, Any] | None = None,
        rid: Any = 1,
        *,
        version: str = "2025-11-25",
        stream: FakeStream | None = None,
    ) -> tuple[Reply, FakeStream]:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            body["params"] = params
        return await self.post(
            body,
            [("Mcp-Session-Id", sid), ("MCP-Protocol-Version", version)],
            stream=stream,
            revision=version,
        )


@pytest.fixture
def make_wire():
    def make(
        *tools: object,
        resources: tuple[object, ...] = (),
        prompts: tuple[object, ...] = (),
        **options: Any,
    ) -> Wire:
        engine = Engine(
            tools=list(tools),
            resources=resources,
            prompts=prompts,
            options=EngineOptions(**options),
        )
        return Wire(engine)

    return make
