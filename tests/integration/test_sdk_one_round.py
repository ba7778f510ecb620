"""The official SDK client reads `also` in the refusal text, at both revisions.

The demo's tools and `orders` (nested objects and arrays) are served over HTTP;
each call of the mistake corpus is answered, through the SDK, with the refusal
the gates build, `also` included, as the text a model reads.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client

from mistake_corpus import corpus, spec_of
from refusal_fixer import first_refusal
from served import ServeApp
from wymcp.conf import load_settings
from wymcp.transport.aiohttp import create_app

REVISIONS = [("auto", "2026-07-28"), ("legacy", "2025-11-25")]
TOOLS = ["wymcp_tasks.Todos", "wymcp_tasks.Projects", "mistake_corpus.Orders"]


@pytest.fixture(params=REVISIONS, ids=[revision for _, revision in REVISIONS])
def revision(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
async def url(serve_app: ServeApp) -> str:
    return await serve_app(create_app(load_settings(None, TOOLS=TOOLS)))


@asynccontextmanager
async def connect(url: str, revision: tuple[str, str]) -> AsyncIterator[Client]:
    mode, expected = revision
    async with Client(url, mode=mode) as client:
        assert client.protocol_version == expected
        yield client


def shown(result: Any) -> dict[str, Any]:
    """The refusal as the model reads it: the one text block, parsed."""
    assert result.is_error is True
    [block] = result.content
    return json.loads(block.text)  # type: ignore[no-any-return]


async def test_a_typo_and_wrong_values_come_back_in_one_answer(
    url: str, revision: tuple[str, str]
) -> None:
    async with connect(url, revision) as client:
        result = await client.call_tool(
            "tasks",
            {"action": "create", "data": {"titel": 5, "priority": "2", "due": 3}},
        )
    refusal = shown(result)
    assert refusal["error"] == "unknown_params"
    assert refusal["unknown"] == ["data.titel"]
    assert refusal["missing"] == ["title"]
    assert refusal["did_you_mean"] == {"data.titel": "data.title"}
    errors = refusal["also"]["invalid_values"]["errors"]
    assert [entry["path"] for entry in errors] == [
        "data.due",
        "data.priority",
        "data.title",
    ]
    assert refusal["also"]["invalid_values"]["error_count"] == 3
    assert list(refusal).index("also") < list(refusal).index("input_schema")


async def test_nested_items_and_a_json_text_data_in_one_answer(
    url: str, revision: tuple[str, str]
) -> None:
    data = {
        "customer": {"name": "Ada", "address": {"street": "Main", "city": "X"}},
        "items": [{"sku": "a", "quantiy": 1}, {"sku": "b", "quantity": "2"}, {}],
    }
    async with connect(url, revision) as client:
        result = await client.call_tool(
            "orders", {"action": "place", "data": json.dumps(data)}
        )
    refusal = shown(result)
    assert refusal["error"] == "invalid_arguments"
    assert "'data' is a string, not an object" in refusal["message"]
    assert refusal["also"]["unknown_params"]["did_you_mean"] == {
        "data.items[0].quantiy": "data.items[0].quantity"
    }
    errors = refusal["also"]["invalid_values"]["errors"]
    assert [entry["path"] for entry in errors] == [
        "data.items[1].quantity",
        "data.items[2]",
    ]


async def test_every_corpus_refusal_reaches_the_model_whole(
    url: str, revision: tuple[str, str]
) -> None:
    """Every fifth call of the corpus: the text the SDK shows is the gates' refusal."""
    calls = corpus()[::5]
    with_also = 0
    async with connect(url, revision) as client:
        for mistake in calls:
            result = await client.call_tool(mistake.tool.name, mistake.arguments)
            refusal = shown(result)
            assert refusal == first_refusal(spec_of(mistake.tool), mistake.arguments)
            with_also += "also" in refusal
    assert with_also >= 10  # 11 of these 68 calls carry one
