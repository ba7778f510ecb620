"""The conformance fixture served by the real engine, as the suite sees it."""

from __future__ import annotations

import base64
import io
import json
import wave
from collections.abc import Mapping
from typing import Any

import pytest

from wymcp.conf import build_engine, load_settings
from wymcp.core.server import Engine, Exchange, Headers, Reply

MODERN = "2026-07-28"


class RecordingStream:
    """A Stream that keeps every message the engine writes."""

    def __init__(self) -> None:
        self.opened = False
        self.messages: list[Any] = []

    async def open(self, headers: Mapping[str, str] | None = None) -> None:
        del headers
        self.opened = True

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        del event_id
        self.opened = True
        if message is not None:
            self.messages.append(message)


@pytest.fixture
def engine() -> Engine:
    return build_engine(load_settings("wymcp_conformance.settings"))


async def post(
    engine: Engine,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    meta: dict[str, Any] | None = None,
) -> tuple[Any, RecordingStream]:
    """One 2026-07-28 request; the JSON-RPC answer and the call's stream."""
    body_params = dict(params or {})
    body_params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        **(meta or {}),
    }
    headers = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)]
    if "name" in body_params:
        headers.append(("Mcp-Name", body_params["name"]))
    elif method == "resources/read":
        headers.append(("Mcp-Name", body_params["uri"]))
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": body_params}
    stream = RecordingStream()
    reply: Reply = await engine.post(
        Exchange(method="POST", headers=Headers.of(headers), body=body), stream
    )
    answer = reply.body if reply.body is not None else stream.messages[-1]
    return answer, stream


async def call(
    engine: Engine, name: str, arguments: dict[str, Any] | None = None, **kwargs: Any
) -> tuple[dict[str, Any], RecordingStream]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    answer, stream = await post(engine, "tools/call", params, **kwargs)
    assert "result" in answer, answer
    return answer["result"], stream


async def test_the_header_tool_comes_first_and_help_is_listed(engine: Engine) -> None:
    answer, _ = await post(engine, "tools/list")
    names = [tool["name"] for tool in answer["result"]["tools"]]
    assert names[0] == "test_x_mcp_header"
    assert {"help", "calc", "test_simple_text", "json_schema_2020_12_tool"} <= set(
        names
    )
    assert all(tool.get("description") for tool in answer["result"]["tools"])


async def test_the_2020_12_schema_is_published_with_every_keyword(
    engine: Engine,
) -> None:
    answer, _ = await post(engine, "tools/list")
    tool = next(
        t for t in answer["result"]["tools"] if t["name"] == "json_schema_2020_12_tool"
    )
    schema = tool["inputSchema"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$defs"]["address"]["$anchor"] == "addressDef"
    assert schema["allOf"] == [
        {"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}
    ]
    assert schema["then"] == {"required": ["phone"]}
    assert schema["else"] == {"required": ["email"]}
    assert schema["additionalProperties"] is False


async def test_simple_text_answers_without_arguments(engine: Engine) -> None:
    result, _ = await call(engine, "test_simple_text")
    assert result["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]
    assert result["isError"] is False


async def test_the_image_is_a_real_png(engine: Engine) -> None:
    result, _ = await call(engine, "test_image_content", {})
    (block,) = result["content"]
    assert block["type"] == "image"
    assert block["mimeType"] == "image/png"
    assert base64.b64decode(block["data"]).startswith(b"\x89PNG\r\n\x1a\n")


async def test_the_audio_is_a_real_wav(engine: Engine) -> None:
    result, _ = await call(engine, "test_audio_content", {})
    (block,) = result["content"]
    assert block["mimeType"] == "audio/wav"
    with wave.open(io.BytesIO(base64.b64decode(block["data"]))) as reader:
        assert reader.getnframes() > 0


async def test_embedded_and_mixed_content(engine: Engine) -> None:
    result, _ = await call(engine, "test_embedded_resource", {})
    assert result["content"][0]["resource"]["uri"] == "test://embedded-resource"
    result, _ = await call(engine, "test_multiple_content_types", {})
    assert [b["type"] for b in result["content"]] == ["text", "image", "resource"]
    assert result["content"][2]["resource"]["mimeType"] == "application/json"


async def test_the_error_tool_answers_is_error_with_a_message(engine: Engine) -> None:
    result, _ = await call(engine, "test_error_handling", {})
    assert result["isError"] is True
    assert result["content"][0]["text"]


async def test_progress_streams_three_increasing_steps(engine: Engine) -> None:
    result, stream = await call(
        engine, "test_tool_with_progress", {}, meta={"progressToken": "p-1"}
    )
    progress = [
        m["params"]
        for m in stream.messages
        if m.get("method") == "notifications/progress"
    ]
    assert [p["progress"] for p in progress] == [0, 50, 100]
    assert {p["progressToken"] for p in progress} == {"p-1"}
    assert result["isError"] is False


async def test_logs_go_out_only_when_the_request_sets_a_level(engine: Engine) -> None:
    _, quiet = await call(engine, "test_logging_tool", {})
    assert not any(m.get("method") == "notifications/message" for m in quiet.messages)
    _, loud = await call(
        engine,
        "test_tool_with_logging",
        {},
        meta={"io.modelcontextprotocol/logLevel": "info"},
    )
    logs = [m for m in loud.messages if m.get("method") == "notifications/message"]
    assert len(logs) == 3


async def test_the_header_tool_echoes_its_region(engine: Engine) -> None:
    answer, _ = await post(
        engine, "tools/call", {"name": "test_x_mcp_header", "arguments": {}}
    )
    assert answer["result"]["content"][0]["text"] == "region: <none>"


async def test_calc_runs_its_actions_and_refuses_a_bad_call(engine: Engine) -> None:
    result, _ = await call(engine, "calc", {"action": "add", "data": {"a": 2, "b": 3}})
    assert result["structuredContent"] == {"result": 5}
    result, _ = await call(
        engine, "calc", {"action": "multiply", "data": {"a": 4, "b": 2.5}}
    )
    assert result["structuredContent"] == {"result": 10.0}
    result, _ = await call(engine, "calc", {"action": "divide", "data": {}})
    assert result["isError"] is True
    refusal = json.loads(result["content"][0]["text"])
    assert refusal["error"] == "unknown_action"
    assert refusal["valid_actions"] == ["add", "multiply"]


async def test_the_resources_read_as_the_suite_expects(engine: Engine) -> None:
    listed, _ = await post(engine, "resources/list")
    uris = [r["uri"] for r in listed["result"]["resources"]]
    assert uris == [
        "test://static-text",
        "test://static-binary",
        "test://watched-resource",
    ]
    assert all(r["description"] for r in listed["result"]["resources"])
    answer, _ = await post(engine, "resources/read", {"uri": "test://static-text"})
    assert answer["result"]["contents"] == [
        {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    ]
    answer, _ = await post(engine, "resources/read", {"uri": "test://static-binary"})
    blob = answer["result"]["contents"][0]["blob"]
    assert base64.b64decode(blob).startswith(b"\x89PNG")
    answer, _ = await post(
        engine, "resources/read", {"uri": "test://template/123/data"}
    )
    assert json.loads(answer["result"]["contents"][0]["text"]) == {
        "id": "123",
        "templateTest": True,
        "data": "Data for ID: 123",
    }


async def test_the_prompts_render_their_arguments(engine: Engine) -> None:
    listed, _ = await post(engine, "prompts/list")
    assert all(p["description"] for p in listed["result"]["prompts"])
    answer, _ = await post(
        engine,
        "prompts/get",
        {
            "name": "test_prompt_with_arguments",
            "arguments": {"arg1": "hello", "arg2": "world"},
        },
    )
    assert answer["result"]["messages"][0]["content"]["text"] == (
        "Prompt with arguments: arg1='hello', arg2='world'"
    )
    answer, _ = await post(
        engine,
        "prompts/get",
        {
            "name": "test_prompt_with_embedded_resource",
            "arguments": {"resourceUri": "test://x"},
        },
    )
    assert answer["result"]["messages"][0]["content"]["resource"]["uri"] == "test://x"
    answer, _ = await post(
        engine,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "par"},
        },
    )
    assert answer["result"]["completion"]["values"] == ["paris", "park", "party"]


ALL_CAPABILITIES = {
    "io.modelcontextprotocol/clientCapabilities": {
        "elicitation": {},
        "sampling": {},
        "roots": {},
    }
}


async def test_an_input_request_round_trip_greets_the_user(engine: Engine) -> None:
    name = "test_input_required_result_elicitation"
    first, _ = await call(engine, name, {}, meta=ALL_CAPABILITIES)
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["user_name"]["method"] == "elicitation/create"
    answer, _ = await post(
        engine,
        "tools/call",
        {
            "name": name,
            "arguments": {},
            "inputResponses": {
                "user_name": {"action": "accept", "content": {"name": "Ada"}}
            },
        },
        meta=ALL_CAPABILITIES,
    )
    assert answer["result"]["content"][0]["text"] == "Hello, Ada!"


async def test_the_multi_round_tool_carries_its_state(engine: Engine) -> None:
    name = "test_input_required_result_multi_round"
    first, _ = await call(engine, name, {}, meta=ALL_CAPABILITIES)
    assert list(first["inputRequests"]) == ["step1"]
    second, _ = await post(
        engine,
        "tools/call",
        {
            "name": name,
            "arguments": {},
            "inputResponses": {
                "step1": {"action": "accept", "content": {"name": "Ada"}}
            },
            "requestState": first["requestState"],
        },
        meta=ALL_CAPABILITIES,
    )
    step2 = second["result"]
    assert list(step2["inputRequests"]) == ["step2"]
    assert step2["requestState"] != first["requestState"]
    third, _ = await post(
        engine,
        "tools/call",
        {
            "name": name,
            "arguments": {},
            "inputResponses": {
                "step2": {"action": "accept", "content": {"color": "teal"}}
            },
            "requestState": step2["requestState"],
        },
        meta=ALL_CAPABILITIES,
    )
    assert third["result"]["content"][0]["text"] == "Ada likes teal."


async def test_the_capability_tool_asks_only_what_was_declared(
    engine: Engine,
) -> None:
    only_sampling = {"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}
    result, _ = await call(
        engine, "test_input_required_result_capabilities", {}, meta=only_sampling
    )
    methods = {r["method"] for r in result["inputRequests"].values()}
    assert methods == {"sampling/createMessage"}


async def test_the_missing_capability_tool_answers_32021(engine: Engine) -> None:
    answer, _ = await post(
        engine, "tools/call", {"name": "test_missing_capability", "arguments": {}}
    )
    assert answer["error"]["code"] == -32021
    assert answer["error"]["data"]["requiredCapabilities"] == {"sampling": {}}


async def test_the_trigger_tools_toggle_a_tool_and_a_prompt(engine: Engine) -> None:
    async def names(method: str, key: str) -> list[str]:
        answer, _ = await post(engine, method)
        return [item["name"] for item in answer["result"][key]]

    assert "test_dynamic_tool" not in await names("tools/list", "tools")
    await call(engine, "test_trigger_tool_change", {})
    assert "test_dynamic_tool" in await names("tools/list", "tools")
    await call(engine, "test_trigger_tool_change", {})
    assert "test_dynamic_tool" not in await names("tools/list", "tools")
    await call(engine, "test_trigger_prompt_change", {})
    assert "test_dynamic_prompt" in await names("prompts/list", "prompts")


async def test_the_elicitation_forms_carry_defaults_and_enum_shapes(
    engine: Engine,
) -> None:
    result, _ = await call(
        engine, "test_elicitation_sep1034_defaults", {}, meta=ALL_CAPABILITIES
    )
    (request,) = result["inputRequests"].values()
    fields = request["params"]["requestedSchema"]["properties"]
    assert {name: field["default"] for name, field in fields.items()} == {
        "name": "John Doe",
        "age": 30,
        "score": 95.5,
        "status": "active",
        "verified": True,
    }
    result, _ = await call(
        engine, "test_elicitation_sep1330_enums", {}, meta=ALL_CAPABILITIES
    )
    (request,) = result["inputRequests"].values()
    fields = request["params"]["requestedSchema"]["properties"]
    assert fields["untitledSingle"]["enum"] == ["option1", "option2", "option3"]
    assert all("title" in choice for choice in fields["titledSingle"]["oneOf"])
    assert len(fields["legacyEnum"]["enumNames"]) == 3
    assert fields["untitledMulti"]["type"] == "array"
    assert all("const" in choice for choice in fields["titledMulti"]["items"]["anyOf"])
