"""Every message a real wymcp server sends is valid against the official schema.

A scripted exchange at 2026-07-28 and at 2025-11-25 over plain HTTP records
every message of every answer, JSON bodies and SSE events alike, and checks
each one against `reference/mcp-schema/<revision>/schema.json`: results by the
method that asked for them, notifications and server requests by their own
method, errors as JSON-RPC error responses.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import aiohttp
import pytest

from schema_oracle import MODERN, REQUESTS, RESULTS, validator

LEGACY = "2025-11-25"

NOTIFICATIONS = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
}
JSON = "application/json"
SSE = "text/event-stream"


def definition_of(revision: str, message: dict[str, Any], method: str) -> list[str]:
    """The schema definitions one server message must meet."""
    if "method" in message:
        if "id" in message:
            return [REQUESTS[message["method"]]]
        return [NOTIFICATIONS.get(message["method"], "JSONRPCNotification")]
    if "error" in message:
        return ["JSONRPCErrorResponse"]
    result = message.get("result", {})
    if revision == MODERN and result.get("resultType") == "input_required":
        return ["JSONRPCResultResponse", "InputRequiredResult"]
    return ["JSONRPCResultResponse", RESULTS[method]]


class Recorder:
    """Posts requests, parses JSON and SSE answers, keeps every message sent."""

    def __init__(self, http: aiohttp.ClientSession, url: str, revision: str) -> None:
        self.http = http
        self.url = url
        self.revision = revision
        self.session_id: str | None = None
        self.recorded: list[tuple[str, dict[str, Any]]] = []
        self.content_types: set[str] = set()

    def headers(self, method: str, name: str | None) -> dict[str, str]:
        headers = {"Accept": f"{JSON}, {SSE}", "Content-Type": JSON}
        if self.revision == MODERN:
            headers |= {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
            if name is not None:
                headers["Mcp-Name"] = name
        elif self.session_id is not None:
            headers |= {"MCP-Protocol-Version": LEGACY}
            headers["Mcp-Session-Id"] = self.session_id
        return headers

    def body(self, rid: int | None, method: str, params: dict[str, Any]) -> Any:
        params = dict(params)
        if self.revision == MODERN:
            params.setdefault(
                "_meta",
                {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            )
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params:
            body["params"] = params
        if rid is not None:
            body["id"] = rid
        return body

    def keep(self, method: str, message: dict[str, Any]) -> None:
        self.recorded.append((method, message))

    async def request(
        self,
        rid: int | None,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        extra_headers: dict[str, str] | None = None,
        answer_client: dict[str, Any] | None = None,
    ) -> tuple[int, list[dict[str, Any]]]:
        """POST one message; the HTTP status and every message answered.

        `answer_client` is the result sent back to a server-to-client request
        that arrives on the call's stream.
        """
        params = params or {}
        headers = self.headers(method, params.get("name", params.get("uri")))
        headers |= extra_headers or {}
        body = self.body(rid, method, params)
        async with self.http.post(self.url, json=body, headers=headers) as response:
            if session_id := response.headers.get("Mcp-Session-Id"):
                self.session_id = session_id
            kind = response.content_type
            messages: list[dict[str, Any]] = []
            if kind == SSE:
                self.content_types.add(SSE)
                async for message in sse_messages(response):
                    self.keep(method, message)
                    messages.append(message)
                    if "id" in message and "method" in message:
                        assert answer_client is not None, message
                        await self.reply(message["id"], answer_client)
            elif kind == JSON:
                self.content_types.add(JSON)
                message = await response.json()
                self.keep(method, message)
                messages.append(message)
            else:
                assert not await response.read()
            return response.status, messages

    async def listen(
        self, rid: int, notifications: dict[str, Any], trigger: str
    ) -> list[dict[str, Any]]:
        """Open `subscriptions/listen`, call the `trigger` tool, read two events.

        The acknowledgement and the change notification; then the client
        closes the stream, which ends the subscription.
        """
        params = {"notifications": notifications}
        headers = self.headers("subscriptions/listen", None)
        body = self.body(rid, "subscriptions/listen", params)
        messages: list[dict[str, Any]] = []
        async with self.http.post(self.url, json=body, headers=headers) as response:
            assert response.content_type == SSE
            self.content_types.add(SSE)
            events = sse_messages(response)
            messages.append(await anext(events))
            await self.request(rid + 1, "tools/call", {"name": trigger})
            messages.append(await anext(events))
            await events.aclose()
        for message in messages:
            self.keep("subscriptions/listen", message)
        return messages

    async def reply(self, rid: Any, result: dict[str, Any]) -> None:
        """Answer a server-to-client request with a POSTed response."""
        response_body = {"jsonrpc": "2.0", "id": rid, "result": result}
        headers = self.headers("", None)
        async with self.http.post(
            self.url, json=response_body, headers=headers
        ) as response:
            assert response.status == 202

    def check_all(self) -> int:
        """Validate every recorded message; how many were checked."""
        for method, message in self.recorded:
            for definition in definition_of(self.revision, message, method):
                value = message
                if definition.endswith("Result") and "result" in message:
                    value = message["result"]
                errors = list(validator(self.revision, definition).iter_errors(value))
                assert not errors, (
                    f"{method} answered a message that is not a valid {definition} "
                    f"at {self.revision}: {errors[0].message[:300]}"
                )
        return len(self.recorded)


async def sse_messages(response: aiohttp.ClientResponse) -> AsyncGenerator[Any, None]:
    """The JSON messages of an SSE body, as each event completes."""
    data: list[str] = []
    async for raw in response.content:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data and any(data):
                yield json.loads("\n".join(data))
            data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data and any(data):
        yield json.loads("\n".join(data))


def result_of(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The result of the response that ends an answer."""
    final = messages[-1]
    assert "result" in final, final
    result: dict[str, Any] = final["result"]
    return result


def methods_in(messages: list[dict[str, Any]]) -> list[str]:
    return [m["method"] for m in messages if "method" in m]


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def test_every_message_at_2026_07_28_is_schema_valid(
    server_url: str, http: aiohttp.ClientSession
) -> None:
    wire = Recorder(http, server_url, MODERN)

    status, messages = await wire.request(1, "server/discover")
    assert status == 200
    assert MODERN in result_of(messages)["supportedVersions"]
    await wire.request(2, "tools/list")
    await wire.request(3, "tools/call", {"name": "help", "arguments": {}})
    calc = {"name": "calc", "arguments": {"action": "add", "data": {"a": 1, "b": 2}}}
    _, messages = await wire.request(4, "tools/call", calc)
    assert result_of(messages)["structuredContent"] == {"result": 3}
    refused = {"name": "calc", "arguments": {"action": "add", "data": {"a": 1}}}
    _, messages = await wire.request(5, "tools/call", refused)
    assert result_of(messages)["isError"] is True
    for rid, tool in enumerate(
        ["test_multiple_content_types", "test_audio_content", "test_error_handling"],
        start=6,
    ):
        await wire.request(rid, "tools/call", {"name": tool})

    progress_meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "progressToken": "tok",
    }
    _, messages = await wire.request(
        10,
        "tools/call",
        {"name": "test_tool_with_progress", "arguments": {}, "_meta": progress_meta},
    )
    assert methods_in(messages) == ["notifications/progress"] * 3
    log_meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/logLevel": "debug",
    }
    _, messages = await wire.request(
        11,
        "tools/call",
        {"name": "test_tool_with_logging", "arguments": {}, "_meta": log_meta},
    )
    assert methods_in(messages) == ["notifications/message"] * 3
    status, messages = await wire.request(
        12,
        "tools/call",
        {"name": "test_x_mcp_header", "arguments": {"region": "north"}},
        extra_headers={"Mcp-Param-Region": "north"},
    )
    assert result_of(messages)["content"][0]["text"] == "region: north"

    errors: list[tuple[int, str, dict[str, Any], dict[str, str], int, int]] = [
        (13, "tools/call", {"name": "no_such_tool"}, {}, 400, -32602),
        (14, "tools/list", {}, {"Mcp-Method": "tools/call"}, 400, -32020),
        (
            15,
            "tools/call",
            {"name": "test_x_mcp_header", "arguments": {"region": "a"}},
            {"Mcp-Param-Region": "b"},
            400,
            -32020,
        ),
        (16, "unknown/method", {}, {}, 404, -32601),
        (17, "ping", {}, {}, 404, -32601),
        (18, "tools/list", {}, {"MCP-Protocol-Version": "2099-01-01"}, 400, -32020),
    ]
    for rid, method, params, headers, want_status, want_code in errors:
        status, messages = await wire.request(
            rid, method, params, extra_headers=headers
        )
        assert (status, messages[-1]["error"]["code"]) == (want_status, want_code)
        assert messages[-1]["id"] == rid
    unsupported = {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2099-01-01",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    }
    status, messages = await wire.request(
        19,
        "tools/list",
        unsupported,
        extra_headers={"MCP-Protocol-Version": "2099-01-01"},
    )
    assert (status, messages[-1]["error"]["code"]) == (400, -32022)
    status, messages = await wire.request(20, "tools/list", {"_meta": {}})
    assert (status, messages[-1]["error"]["code"]) == (400, -32602)

    assert wire.content_types == {JSON, SSE}
    assert wire.check_all() >= 25


async def test_resources_prompts_and_input_requests_at_2026_07_28_are_schema_valid(
    server_url: str, http: aiohttp.ClientSession
) -> None:
    wire = Recorder(http, server_url, MODERN)

    await wire.request(21, "resources/list")
    await wire.request(22, "resources/templates/list")
    await wire.request(23, "resources/read", {"uri": "test://static-binary"})
    await wire.request(24, "resources/read", {"uri": "test://template/5/data"})
    status, messages = await wire.request(
        25, "resources/read", {"uri": "test://missing"}
    )
    assert (status, messages[-1]["error"]["code"]) == (400, -32602)
    await wire.request(26, "prompts/list")
    await wire.request(
        27,
        "prompts/get",
        {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}},
    )
    await wire.request(28, "prompts/get", {"name": "test_prompt_with_image"})
    await wire.request(
        29,
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
            "argument": {"name": "id", "value": "1"},
        },
    )
    asking_meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }
    ask = {
        "name": "test_input_required_result_request_state",
        "arguments": {},
        "_meta": asking_meta,
    }
    _, messages = await wire.request(30, "tools/call", ask)
    asked = result_of(messages)
    assert asked["resultType"] == "input_required"
    retry = ask | {
        "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
        "requestState": asked["requestState"],
    }
    _, messages = await wire.request(31, "tools/call", retry)
    assert "state-ok" in result_of(messages)["content"][0]["text"]
    status, messages = await wire.request(
        32, "tools/call", retry | {"requestState": asked["requestState"][:-2] + "xx"}
    )
    assert (status, messages[-1]["error"]["code"]) == (400, -32602)
    status, messages = await wire.request(
        33, "tools/call", {"name": "test_missing_capability"}
    )
    assert (status, messages[-1]["error"]["code"]) == (400, -32021)
    heard = await wire.listen(
        40, {"toolsListChanged": True}, "test_trigger_tool_change"
    )
    assert methods_in(heard) == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ]

    assert wire.content_types == {JSON, SSE}
    assert wire.check_all() >= 15


async def test_every_message_at_2025_11_25_is_schema_valid(
    server_url: str, http: aiohttp.ClientSession
) -> None:
    wire = Recorder(http, server_url, LEGACY)

    status, messages = await wire.request(
        1,
        "initialize",
        {
            "protocolVersion": LEGACY,
            "capabilities": {"elicitation": {}, "sampling": {}},
            "clientInfo": {"name": "wire-recorder", "version": "1.0"},
        },
    )
    assert status == 200
    assert result_of(messages)["protocolVersion"] == LEGACY
    assert wire.session_id
    status, messages = await wire.request(None, "notifications/initialized")
    assert (status, messages) == (202, [])

    await wire.request(2, "ping")
    await wire.request(3, "tools/list")
    await wire.request(4, "tools/call", {"name": "help", "arguments": {"tool": "calc"}})
    calc = {
        "name": "calc",
        "arguments": {"action": "multiply", "data": {"a": 2, "b": 4}},
    }
    _, messages = await wire.request(5, "tools/call", calc)
    assert result_of(messages)["structuredContent"] == {"result": 8}
    refused = {"name": "calc", "arguments": {"action": "multiply", "data": {"a": "2"}}}
    _, messages = await wire.request(6, "tools/call", refused)
    assert result_of(messages)["isError"] is True
    await wire.request(7, "tools/call", {"name": "test_multiple_content_types"})
    await wire.request(8, "tools/call", {"name": "test_image_content"})

    _, messages = await wire.request(
        9,
        "tools/call",
        {
            "name": "test_tool_with_progress",
            "arguments": {},
            "_meta": {"progressToken": 9},
        },
    )
    assert methods_in(messages) == ["notifications/progress"] * 3
    await wire.request(10, "logging/setLevel", {"level": "info"})
    _, messages = await wire.request(
        11, "tools/call", {"name": "test_tool_with_logging", "arguments": {}}
    )
    assert methods_in(messages) == ["notifications/message"] * 3

    _, messages = await wire.request(
        12,
        "tools/call",
        {"name": "test_elicitation", "arguments": {"message": "Who are you?"}},
        answer_client={
            "action": "accept",
            "content": {"username": "ada", "email": "ada@example.com"},
        },
    )
    assert methods_in(messages) == ["elicitation/create"]
    assert "ada" in result_of(messages)["content"][0]["text"]
    _, messages = await wire.request(
        13,
        "tools/call",
        {"name": "test_sampling", "arguments": {"prompt": "Hi?"}},
        answer_client={
            "role": "assistant",
            "content": {"type": "text", "text": "Hello there"},
            "model": "test-model",
        },
    )
    assert methods_in(messages) == ["sampling/createMessage"]
    assert "Hello there" in result_of(messages)["content"][0]["text"]

    status, messages = await wire.request(14, "tools/call", {"name": "no_such_tool"})
    assert messages[-1]["error"]["code"] == -32602

    await wire.request(15, "resources/list")
    await wire.request(16, "resources/read", {"uri": "test://static-text"})
    await wire.request(17, "resources/subscribe", {"uri": "test://watched-resource"})
    await wire.request(18, "resources/unsubscribe", {"uri": "test://watched-resource"})
    await wire.request(19, "prompts/get", {"name": "test_simple_prompt"})
    await wire.request(
        20,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg2", "value": "pa"},
        },
    )

    assert wire.content_types == {JSON, SSE}
    assert wire.check_all() >= 20

    async with http.delete(server_url, headers=wire.headers("", None)) as response:
        assert response.status in (200, 202, 204)
    status, _ = await wire.request(21, "tools/list")
    assert status == 404
