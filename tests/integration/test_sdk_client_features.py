"""Resources, prompts, input requests and change notifications with the official
SDK client, at 2026-07-28 and at 2025-11-25.

The same fixture code asks the client at both revisions: at 2026-07-28 the
SDK answers `input_required` results and retries, at 2025-11-25 it answers the
server's requests on the call's stream.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged

REVISIONS = [("auto", "2026-07-28"), ("legacy", "2025-11-25")]


async def elicit_ada(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def sample_paris(
    context: ClientRequestContext, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="Paris"),
        model="test-model",
    )


@pytest.fixture(params=REVISIONS, ids=[revision for _, revision in REVISIONS])
def revision(request: pytest.FixtureRequest) -> tuple[str, str]:
    """How the client connects (`mode`) and the revision it must end up at."""
    return request.param  # type: ignore[no-any-return]


@asynccontextmanager
async def connect(
    server_url: str, revision: tuple[str, str], **options: Any
) -> AsyncIterator[Client]:
    """A connected client; entered and left in the test's own task (anyio)."""
    mode, expected = revision
    async with Client(server_url, mode=mode, **options) as connected:
        assert connected.protocol_version == expected
        yield connected


def first_text(blocks: Any) -> str:
    text = blocks[0].model_dump()["text"]
    assert isinstance(text, str)
    return text


async def test_resources_are_listed_and_read(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        listed = await client.list_resources()
        assert "test://static-text" in [str(r.uri) for r in listed.resources]
        text = await client.read_resource("test://static-text")
        assert first_text(text.contents) == (
            "This is the content of the static text resource."
        )
        templated = await client.read_resource("test://template/7/data")
        assert '"Data for ID: 7"' in first_text(templated.contents)


async def test_a_prompt_renders_its_arguments(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        listed = await client.list_prompts()
        assert "test_prompt_with_arguments" in [p.name for p in listed.prompts]
        prompt = await client.get_prompt(
            "test_prompt_with_arguments", {"arg1": "sun", "arg2": "moon"}
        )
        content = prompt.messages[0].content.model_dump()
        assert content["text"] == "Prompt with arguments: arg1='sun', arg2='moon'"


async def test_a_prompt_with_a_missing_argument_is_refused(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        with pytest.raises(MCPError, match="arg2") as refused:
            await client.get_prompt("test_prompt_with_arguments", {"arg1": "sun"})
        assert "Traceback" not in str(refused.value)


async def test_an_elicitation_reaches_the_client_and_back(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision, elicitation_callback=elicit_ada) as client:
        result = await client.call_tool("test_input_required_result_elicitation", {})
        assert result.is_error is False
        assert first_text(result.content) == "Hello, Ada!"


async def test_a_sampling_request_reaches_the_client_and_back(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision, sampling_callback=sample_paris) as client:
        result = await client.call_tool("test_input_required_result_sampling", {})
        assert result.is_error is False
        assert first_text(result.content) == "The model said: Paris"


async def test_a_prompt_can_ask_the_client_first(
    server_url: str, revision: tuple[str, str]
) -> None:
    async def give_context(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"context": "tidy"})

    async with connect(server_url, revision, elicitation_callback=give_context) as c:
        prompt = await c.get_prompt("test_input_required_result_prompt")
        assert prompt.messages[0].content.model_dump()["text"] == (
            "Use this context: tidy"
        )


async def test_a_listener_hears_the_tool_list_change_at_2026(
    server_url: str,
) -> None:
    async with (
        connect(server_url, ("auto", "2026-07-28")) as client,
        client.listen(tools_list_changed=True) as subscription,
    ):
        await client.call_tool("test_trigger_tool_change", {})
        event = await anext(aiter(subscription))
        assert isinstance(event, ToolsListChanged)
        listed = await client.list_tools(cache_mode="refresh")
        assert "test_dynamic_tool" in [tool.name for tool in listed.tools]


async def test_a_session_hears_the_tool_list_change_at_2025(
    server_url: str,
) -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with connect(
        server_url, ("legacy", "2025-11-25"), message_handler=on_message
    ) as client:
        await client.call_tool("test_trigger_tool_change", {})
        await changed.wait()
        listed = await client.list_tools()
        assert "test_dynamic_tool" in [tool.name for tool in listed.tools]
