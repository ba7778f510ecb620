"""A call that asks the client several times in a row, over HTTP with the
official SDK client: at 2026-07-28 the sealed requestState carries the earlier
answers into each retry; at 2025-11-25 each question is a request on the
call's stream. Ten rounds are answered; an eleventh question is isError.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext

from served import ServeApp
from wymcp.conf import load_settings
from wymcp.core.schema import Tool
from wymcp.transport.aiohttp import create_app

NAME = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}
REVISIONS = [("auto", "2026-07-28"), ("legacy", "2025-11-25")]


class TwoQuestions(Tool):
    name = "two_questions"
    description = "Ask a first name, then a last name, and greet."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        first = await ctx.elicit("First name?", NAME)
        last = await ctx.elicit("Last name?", NAME)
        return f"Hello, {first['content']['name']} {last['content']['name']}!"


class SampleThenRoots(Tool):
    name = "sample_then_roots"
    description = "Ask the model something, then list the client's roots."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        said = await ctx.sample("Say hi", max_tokens=10)
        roots = await ctx.list_roots()
        return f"{said['content']['text']}; {len(roots['roots'])} roots"


class Questions(Tool):
    name = "questions"
    description = "Ask `count` questions, one after the other."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"count": {"type": "integer", "minimum": 1}},
        "required": ["count"],
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        names = [
            (await ctx.elicit(f"Name {index}?", NAME))["content"]["name"]
            for index in range(arguments["count"])
        ]
        return ",".join(names)


@pytest.fixture
async def url(serve_app: ServeApp) -> str:
    settings = load_settings(
        None,
        TOOLS=(TwoQuestions, SampleThenRoots, Questions),
        STATE_SECRET="multi-round-test-key-not-a-secret-0123456789",
    )
    return await serve_app(create_app(settings))


@pytest.fixture(params=REVISIONS, ids=[revision for _, revision in REVISIONS])
def revision(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


async def elicit(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    message = params.model_dump()["message"]
    name = {"First name?": "Ada", "Last name?": "Lovelace"}.get(message, message[5:-1])
    return types.ElicitResult(action="accept", content={"name": name})


async def sample(
    context: ClientRequestContext, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="hi"), model="m"
    )


async def roots(context: ClientRequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///r")])


def text(result: Any) -> str:
    value = result.content[0].model_dump()["text"]
    assert isinstance(value, str)
    return value


async def test_two_elicitations_in_a_row(url, revision):
    mode, expected = revision
    async with Client(url, mode=mode, elicitation_callback=elicit) as client:
        assert client.protocol_version == expected
        result = await client.call_tool("two_questions", {})
    assert result.is_error is False
    assert text(result) == "Hello, Ada Lovelace!"


async def test_sampling_then_roots(url, revision):
    mode, _ = revision
    async with Client(
        url, mode=mode, sampling_callback=sample, list_roots_callback=roots
    ) as client:
        result = await client.call_tool("sample_then_roots", {})
    assert text(result) == "hi; 1 roots"


async def test_ten_questions_fit_the_client_default_cap(url, revision):
    mode, _ = revision
    async with Client(url, mode=mode, elicitation_callback=elicit) as client:
        result = await client.call_tool("questions", {"count": 10})
    assert result.is_error is False
    assert text(result) == ",".join(str(index) for index in range(10))


async def test_an_eleventh_round_is_a_clear_error_at_2026(url):
    async with Client(url, mode="auto", elicitation_callback=elicit) as client:
        result = await client.call_tool("questions", {"count": 11})
    assert result.is_error is True
    assert "more than 10 rounds" in json.loads(text(result))["message"]
