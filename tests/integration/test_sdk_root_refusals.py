"""Root-level mistakes reach the official SDK client as readable tool results.

A call without `action`, with a stray key, with a non-string `action` or with
non-object `data` is answered `isError: true` with the `invalid_arguments`
refusal as text (MCP 2025-11-25: input validation errors are tool results), at
2026-07-28 (stateless) and at 2025-11-25 (sessions). What is no call of a known
tool stays a JSON-RPC error.
"""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

REVISIONS = [("auto", "2026-07-28"), ("legacy", "2025-11-25")]


@pytest.fixture(params=REVISIONS, ids=[revision for _, revision in REVISIONS])
def revision(request: pytest.FixtureRequest) -> tuple[str, str]:
    """How the client connects (`mode`) and the revision it must end up at."""
    return request.param  # type: ignore[no-any-return]


@asynccontextmanager
async def connect(server_url: str, revision: tuple[str, str]) -> AsyncIterator[Client]:
    mode, expected = revision
    async with Client(server_url, mode=mode) as connected:
        assert connected.protocol_version == expected
        yield connected


def shown(result: Any) -> dict[str, Any]:
    """The refusal as the model reads it: the first text block, parsed."""
    assert result.is_error is True
    [block] = result.content
    return json.loads(block.text)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"a": 2, "b": 3}, "'action' is missing"),
        ({"action": "add", "data": {"a": 1, "b": 2}, "extra": 1}, "'extra' is not"),
        ({"action": 7, "data": {"a": 1, "b": 2}}, "'action' is a number"),
        ({"action": "add", "data": [1, 2]}, "'data' is an array, not an object"),
    ],
)
async def test_a_root_mistake_is_a_tool_result_the_model_can_read(
    server_url: str, revision: tuple[str, str], arguments: dict[str, Any], said: str
) -> None:
    async with connect(server_url, revision) as client:
        result = await client.call_tool("calc", arguments)
        refusal = shown(result)
        assert refusal["error"] == "invalid_arguments"
        assert said in refusal["message"]
        assert "takes arguments 'action' (one of: add, multiply)" in refusal["message"]
        assert refusal["tool"] == "calc"
        assert refusal["valid_actions"] == ["add", "multiply"]
        assert refusal["help"] == 'help {tool: "calc"}'
        assert result.structured_content is None


async def test_bare_data_fields_are_pointed_into_data(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        refusal = shown(await client.call_tool("calc", {"a": 2, "b": 3}))
        assert refusal["unknown"] == ["arguments.a", "arguments.b"]
        assert refusal["did_you_mean"] == {
            "arguments.a": "data.a",
            "arguments.b": "data.b",
        }
        fixed = await client.call_tool(
            "calc", {"action": "add", "data": {"a": 2, "b": 3}}
        )
        assert fixed.is_error is False
        assert fixed.structured_content == {"result": 5}


async def test_a_typo_in_data_costs_one_round(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        refusal = shown(
            await client.call_tool("calc", {"action": "add", "data": {"aa": 1}})
        )
        assert refusal["error"] == "unknown_params"
        assert refusal["missing"] == ["a", "b"]


async def test_help_with_a_misspelled_argument_is_a_tool_result(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        refusal = shown(await client.call_tool("help", {"tol": "calc"}))
        assert refusal["error"] == "unknown_params"
        assert refusal["did_you_mean"] == {"arguments.tol": "arguments.tool"}


async def test_an_unknown_tool_stays_a_json_rpc_error(
    server_url: str, revision: tuple[str, str]
) -> None:
    async with connect(server_url, revision) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("no_such_tool", {"action": "add"})
        assert raised.value.code == -32602
