"""Tests of the shop's stock tool, written with wymcp.testing."""

import pytest
from shop.tools import Stock

from wymcp.testing import (
    Client,
    assert_refused,
    assert_succeeded,
    assert_tool_error,
    build_context,
    call,
)

pytestmark = pytest.mark.asyncio


async def test_lookup_answers_what_is_on_the_shelf(wymcp_client: Client) -> None:
    answer = await wymcp_client.call("stock", "lookup", {"sku": "apple"})
    assert assert_succeeded(answer) == {"sku": "apple", "on_shelf": 120}


async def test_an_unknown_article_is_a_tool_error(wymcp_client: Client) -> None:
    answer = await wymcp_client.call("stock", "lookup", {"sku": "kiwi"})
    assert_tool_error(answer, "No article 'kiwi' in this shop.")


async def test_a_quantity_over_the_maximum_is_refused_with_its_path(
    wymcp_client: Client,
) -> None:
    items = [{"sku": "apple", "qty": 1}] * 3 + [{"sku": "pear", "qty": 5000}]
    answer = await wymcp_client.call("stock", "reserve", {"items": items})
    assert_refused(
        answer,
        "invalid_values",
        path="data.items[3].qty",
        problem="value is higher than maximum 1000",
    )


async def test_reserving_reports_progress(wymcp_client: Client) -> None:
    items = [{"sku": "apple", "qty": 2}, {"sku": "pear", "qty": 1}]
    answer = await wymcp_client.call(
        "stock", "reserve", {"items": items}, progress=True
    )
    assert assert_succeeded(answer) == {"reserved": ["apple", "pear"], "note": ""}
    assert [p["progress"] for p in answer.progress] == [1, 2]


@pytest.mark.wymcp(protocol_version="2025-11-25")
async def test_a_2025_session_gets_the_same_refusal(wymcp_client: Client) -> None:
    assert wymcp_client.session_id is not None
    answer = await wymcp_client.call("stock", "reserve", {"items": [], "colour": 1})
    assert_refused(answer, "unknown_params", path="data.colour")


@pytest.mark.parametrize("wymcp_protocol_version", ["2026-07-28", "2025-06-18"])
async def test_help_describes_the_action(
    wymcp_client: Client, wymcp_protocol_version: str
) -> None:
    answer = await wymcp_client.help("stock", "reserve")
    assert answer.value["required"] == ["items"]


@pytest.mark.wymcp(tools=[Stock], SERVER_NAME="other")
async def test_a_marker_can_serve_tools_without_a_settings_module(
    wymcp_client: Client,
) -> None:
    answer = await wymcp_client.request("server/discover")
    assert answer.result is not None
    assert answer.result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == (
        "other"
    )


async def test_a_direct_call_meets_the_same_gates() -> None:
    answer = await call(Stock, "reserve", {"items": [{"sku": "plum", "qty": 0}]})
    assert_refused(answer, "invalid_values", path="data.items[0].qty")
    answer = await call(Stock, "reserve", {"items": [{"sku": "plum", "qty": 1}]})
    assert_tool_error(answer, "Not enough plum on the shelf.")


async def test_a_direct_call_streams_what_its_context_asks_for() -> None:
    ctx = build_context(progress_token="p", log_level="info")
    answer = await call(
        Stock, "reserve", {"items": [{"sku": "pear", "qty": 1}]}, ctx=ctx
    )
    assert answer.logs == [{"level": "info", "data": "reserved 1 article(s)"}]
