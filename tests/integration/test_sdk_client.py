"""The official MCP Python SDK client against a real wymcp server.

At 2026-07-28 (discovered, stateless) and at 2025-11-25 (initialize,
sessions): list the tools, read `help`, call an action, get refusals,
receive progress, send a mirrored header.
"""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client

REVISIONS = [("auto", "2026-07-28"), ("legacy", "2025-11-25")]


def decoded(result: Any) -> Any:
    """The JSON in a call result's first text block."""
    return json.loads(result.content[0].text)


@pytest.fixture(params=REVISIONS, ids=[revision for _, revision in REVISIONS])
def revision(request: pytest.FixtureRequest) -> tuple[str, str]:
    """How the client connects (`mode`) and the revision it must end up at."""
    return request.param  # type: ignore[no-any-return]


@asynccontextmanager
async def connect(server_url: str, revision: tuple[str, str]) -> AsyncIterator[Client]:
    """A connected client; entered and left in the test's own task (anyio)."""
    mode, expected = revision
    async with Client(server_url, mode=mode) as connected:
        assert connected.protocol_version == expected
        yield connected


async def test_the_client_lists_every_tool_with_help_last(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        listed = await client.list_tools()
        names = [tool.name for tool in listed.tools]
        assert names[0] == "test_x_mcp_header"
        assert names[-1] == "help"
        calc = next(tool for tool in listed.tools if tool.name == "calc")
        assert calc.input_schema["properties"]["action"]["enum"] == ["add", "multiply"]


async def test_help_answers_the_index_a_tool_and_an_action(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        index = await client.call_tool("help", {})
        assert index.is_error is False
        entries = {entry["tool"]: entry for entry in decoded(index)["tools"]}
        assert "calc" in entries
        assert "test_simple_text" in entries
        tool = await client.call_tool("help", {"tool": "calc"})
        assert tool.is_error is False
        assert sorted(decoded(tool)["actions"]) == ["add", "multiply"]
        action = await client.call_tool("help", {"tool": "calc", "action": "multiply"})
        assert action.is_error is False
        assert decoded(action)["action"] == "multiply"
        assert decoded(action)["required"] == ["a", "b"]


async def test_help_for_an_unknown_tool_names_the_valid_ones(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        answer = await client.call_tool("help", {"tool": "nope"})
        assert answer.is_error is True
        assert decoded(answer)["error"] == "unknown_tool"
        assert "calc" in decoded(answer)["valid_tools"]


async def test_an_action_answers_its_structured_value(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        result = await client.call_tool(
            "calc", {"action": "add", "data": {"a": 2, "b": 3}}
        )
        assert result.is_error is False
        assert result.structured_content == {"result": 5}
        assert decoded(result) == {"result": 5}


async def test_a_missing_field_is_refused_with_a_pointer_to_help(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        result = await client.call_tool("calc", {"action": "add", "data": {"a": 2}})
        assert result.is_error is True
        refusal = decoded(result)
        assert refusal["error"] == "missing_required_fields"
        assert refusal["missing"] == ["b"]
        assert refusal["tool"] == "calc"
        assert refusal["action"] == "add"
        assert refusal["help"].startswith("help")
        assert result.structured_content is None


async def test_unknown_keys_and_bad_values_are_refused_in_one_answer(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        unknown = await client.call_tool(
            "calc", {"action": "add", "data": {"a": 1, "b": 2, "c": 3}}
        )
        assert decoded(unknown)["error"] == "unknown_params"
        assert decoded(unknown)["unknown"] == ["data.c"]
        invalid = await client.call_tool(
            "calc", {"action": "multiply", "data": {"a": "x", "b": True}}
        )
        refusal = decoded(invalid)
        assert refusal["error"] == "invalid_values"
        assert [entry["path"] for entry in refusal["errors"]] == ["data.a", "data.b"]
        assert "x" not in json.dumps(refusal["errors"])


async def test_an_unknown_action_lists_the_valid_ones(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        result = await client.call_tool("calc", {"action": "divide", "data": {}})
        assert result.is_error is True
        assert decoded(result)["valid_actions"] == ["add", "multiply"]


async def test_progress_reaches_the_callback(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        seen: list[float] = []

        async def on_progress(
            progress: float, total: float | None, message: str | None
        ) -> None:
            seen.append(progress)

        result = await client.call_tool(
            "test_tool_with_progress", {}, progress_callback=on_progress
        )
        assert result.is_error is False
        assert seen == [0, 50, 100]


async def test_a_mirrored_header_is_accepted(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        await client.list_tools()
        result = await client.call_tool("test_x_mcp_header", {"region": "eu west ü"})
        assert result.is_error is False
        assert result.content[0].model_dump()["text"] == "region: eu west ü"
