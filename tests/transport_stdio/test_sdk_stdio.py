"""`wymcp stdio` under the official SDK's stdio client, at 2026-07-28 and at
2025-11-25: list, call, refusal, help, resource, prompt, completion, progress,
logging, elicitation, sampling, roots, two questions in one call, list changes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged
from stdio_harness import FIXTURE, WYMCP, child_env

REVISIONS = [("auto", "2026-07-28"), ("legacy", "2025-11-25")]


def server(settings: str = FIXTURE) -> StdioServerParameters:
    return StdioServerParameters(
        command=WYMCP, args=["stdio", "--settings", settings], env=child_env()
    )


@pytest.fixture(params=REVISIONS, ids=[revision for _, revision in REVISIONS])
def revision(request: pytest.FixtureRequest) -> tuple[str, str]:
    """How the client connects (`mode`) and the revision it must end up at."""
    return request.param  # type: ignore[no-any-return]


@asynccontextmanager
async def connect(revision: tuple[str, str], **options: Any) -> AsyncIterator[Client]:
    mode, expected = revision
    async with Client(server(), mode=mode, **options) as connected:
        assert connected.protocol_version == expected
        yield connected


def text(blocks: Any) -> str:
    value = blocks[0].model_dump()["text"]
    assert isinstance(value, str)
    return value


async def elicit_names(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    name = "Ada" if params.model_dump()["message"] == "First name?" else "Lovelace"
    return types.ElicitResult(action="accept", content={"name": name})


async def sample_hi(
    context: ClientRequestContext, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="hi"), model="m"
    )


async def two_roots(context: ClientRequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(
        roots=[types.Root(uri="file:///a"), types.Root(uri="file:///b")]
    )


async def test_the_low_level_session_lists_and_calls():
    """`stdio_client` + `ClientSession`, the SDK's plainest stdio pairing."""
    async with (
        stdio_client(server()) as streams,
        ClientSession(*streams) as session,
    ):
        await session.initialize()
        listed = await session.list_tools()
        assert [tool.name for tool in listed.tools][-1] == "help"
        result = await session.call_tool(
            "calc", {"action": "add", "data": {"a": 2, "b": 3}}
        )
        assert result.structured_content == {"result": 5}


async def test_list_call_and_refusal(revision):
    async with connect(revision) as client:
        listed = await client.list_tools()
        names = [tool.name for tool in listed.tools]
        assert names[0] == "test_x_mcp_header"
        assert names[-1] == "help"
        good = await client.call_tool(
            "calc", {"action": "add", "data": {"a": 2, "b": 3}}
        )
        assert good.is_error is False
        assert good.structured_content == {"result": 5}
        refused = await client.call_tool("calc", {"action": "add", "data": {"a": "x"}})
        assert refused.is_error is True
        refusal = json.loads(text(refused.content))
        assert refusal["error"] == "missing_required_fields"
        assert refusal["help"].startswith("help")
        helped = await client.call_tool("help", {"tool": "calc"})
        assert sorted(json.loads(text(helped.content))["actions"]) == [
            "add",
            "multiply",
        ]


async def test_an_annotated_tool_needs_no_headers_over_stdio(revision):
    async with connect(revision) as client:
        result = await client.call_tool("test_x_mcp_header", {"region": "eu-west"})
        assert result.is_error is False


async def test_a_raising_tool_answers_is_error(revision):
    async with connect(revision) as client:
        result = await client.call_tool("crash", {})
        assert result.is_error is True
        assert "Traceback" not in text(result.content)


async def test_resources_prompts_and_completion(revision):
    async with connect(revision) as client:
        listed = await client.list_resources()
        assert "test://static-text" in [str(r.uri) for r in listed.resources]
        read = await client.read_resource("test://static-text")
        assert text(read.contents) == "This is the content of the static text resource."
        prompt = await client.get_prompt(
            "test_prompt_with_arguments", {"arg1": "sun", "arg2": "moon"}
        )
        assert prompt.messages[0].content.model_dump()["text"] == (
            "Prompt with arguments: arg1='sun', arg2='moon'"
        )
        with pytest.raises(MCPError, match="arg2"):
            await client.get_prompt("test_prompt_with_arguments", {"arg1": "sun"})
        completed = await client.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": ""},
        )
        assert isinstance(completed.completion.values, list)


async def test_progress_reaches_the_callback(revision):
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None):
        seen.append(progress)

    async with connect(revision) as client:
        result = await client.call_tool(
            "test_tool_with_progress", {}, progress_callback=on_progress
        )
        assert result.is_error is False
    assert len(seen) >= 3
    assert seen == sorted(seen)


async def test_log_messages_reach_the_callback(revision):
    logged: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params.data)

    async with connect(revision, logging_callback=on_log, log_level="debug") as client:
        result = await client.call_tool("test_tool_with_logging", {})
        assert result.is_error is False
    assert logged


async def test_an_elicitation_reaches_the_client_and_back(revision):
    async def elicit_ada(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async with connect(revision, elicitation_callback=elicit_ada) as client:
        result = await client.call_tool("test_input_required_result_elicitation", {})
        assert text(result.content) == "Hello, Ada!"


async def test_two_questions_in_one_call(revision):
    async with connect(revision, elicitation_callback=elicit_names) as client:
        result = await client.call_tool("two_questions", {})
        assert result.is_error is False
        assert text(result.content) == "Hello, Ada Lovelace!"


async def test_sampling_then_roots_in_one_call(revision):
    async with connect(
        revision, sampling_callback=sample_hi, list_roots_callback=two_roots
    ) as client:
        result = await client.call_tool("sample_then_roots", {})
        assert result.is_error is False
        assert text(result.content) == "hi; roots: file:///a, file:///b"


async def test_a_listener_hears_the_tool_list_change_at_2026():
    async with (
        connect(("auto", "2026-07-28")) as client,
        client.listen(tools_list_changed=True) as subscription,
    ):
        await client.call_tool("test_trigger_tool_change", {})
        with anyio.fail_after(60):
            event = await anext(aiter(subscription))
        assert isinstance(event, ToolsListChanged)
        listed = await client.list_tools(cache_mode="refresh")
        assert "test_dynamic_tool" in [tool.name for tool in listed.tools]


async def test_a_session_hears_the_tool_list_change_at_2025():
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with connect(("legacy", "2025-11-25"), message_handler=on_message) as client:
        await client.call_tool("test_trigger_tool_change", {})
        with anyio.fail_after(60):
            await changed.wait()
        listed = await client.list_tools()
        assert "test_dynamic_tool" in [tool.name for tool in listed.tools]
