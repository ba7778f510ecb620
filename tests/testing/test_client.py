"""The in-process Client: both eras, list/call/help, streamed messages, shutdown."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from wymcp.core.server import MODERN
from wymcp.testing import (
    Client,
    assert_refused,
    assert_rpc_error,
    assert_succeeded,
    connect,
)
from wymcp.transport.aiohttp import create_app, setup

ITEMS = [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 3}]
ERAS = [MODERN, "2025-11-25", "2025-06-18", "2025-03-26"]


@pytest.mark.parametrize("revision", ERAS)
async def test_list_call_and_help_at_every_revision(settings, revision):
    async with connect(settings, protocol_version=revision) as client:
        names = [tool["name"] for tool in await client.list_tools()]
        assert names == ["orders", "weather", "greeter", "help"]
        placed = await client.call("orders", "place", {"customer": "c", "items": ITEMS})
        assert assert_succeeded(placed)["units"] == 5
        refused = await client.call("orders", "place", {"customer": "", "items": []})
        assert_refused(
            refused,
            "invalid_values",
            path="data.customer",
            problem="value length must be at least 1",
        )
        assert_refused(refused, problem="value should have at least 1 items")
        index = await client.help()
        assert not index.is_error
        assert "orders" in index.text
        action = await client.help("orders", "cancel")
        assert action.value["required"] == ["order_id"]


async def test_a_2026_client_is_stateless_and_a_2025_one_holds_a_session(settings):
    async with connect(settings) as modern:
        assert modern.session_id is None
        assert modern.initialize_result is None
    async with connect(settings, protocol_version="2025-11-25") as legacy:
        assert legacy.session_id
        assert legacy.initialize_result is not None
        assert legacy.initialize_result["protocolVersion"] == "2025-11-25"


async def test_close_deletes_the_session_then_stops_the_app(settings):
    seen: list[tuple[str, int]] = []
    cleaned: list[bool] = []

    @web.middleware
    async def record(request: web.Request, handler: Any) -> web.StreamResponse:
        response = await handler(request)
        seen.append((request.method, response.status))
        return response

    async def cleanup(_app: web.Application) -> None:
        cleaned.append(True)

    app = create_app(settings)
    app.middlewares.append(record)
    app.on_cleanup.append(cleanup)
    client = Client(app, protocol_version="2025-11-25")
    await client.start()
    assert client.session_id is not None
    await client.close()
    await client.close()
    assert seen[-1] == ("DELETE", 200)
    assert cleaned == [True]
    assert client.session_id is None
    with pytest.raises(RuntimeError, match="not started"):
        _ = client.http


async def test_progress_and_logs_stream_with_the_call(settings):
    async with connect(settings, log_level="debug") as client:
        answer = await client.call(
            "orders", "place", {"customer": "c", "items": ITEMS}, progress=True
        )
    assert answer.headers["Content-Type"].startswith("text/event-stream")
    assert [(p["progress"], p["total"]) for p in answer.progress] == [(1, 2), (2, 2)]
    assert [log["level"] for log in answer.logs] == ["info", "debug"]
    assert_succeeded(answer)


async def test_without_progress_or_a_level_a_2026_call_answers_plain_json(settings):
    async with connect(settings) as client:
        answer = await client.call("orders", "place", {"customer": "c", "items": ITEMS})
    assert answer.headers["Content-Type"].startswith("application/json")
    assert answer.messages == ()


async def test_the_mirrored_param_header_is_sent_for_annotated_arguments(settings):
    async with connect(settings) as client:
        answer = await client.call("weather", arguments={"region": "Zürich"})
        assert answer.value == "Zürich: sunny for 1 day(s)"
        raw = await client.post(
            {
                "jsonrpc": "2.0",
                "id": 99,
                "method": "tools/call",
                "params": {
                    "name": "weather",
                    "arguments": {"region": "north"},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": MODERN,
                        "io.modelcontextprotocol/clientCapabilities": {},
                    },
                },
            },
            [
                ("MCP-Protocol-Version", MODERN),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "weather"),
            ],
        )
    assert raw.status == 400
    assert_rpc_error(raw, -32020)


async def test_an_unknown_tool_is_a_json_rpc_error(settings):
    async with connect(settings) as client:
        answer = await client.call("nope", "x")
    assert_rpc_error(answer, -32602)


@pytest.mark.parametrize("revision", [MODERN, "2025-11-25"])
async def test_on_request_answers_what_the_server_asks(settings, revision):
    asked: list[tuple[str, dict[str, Any]]] = []

    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append((method, params))
        return {"action": "accept", "content": {"name": "Ada"}}

    async with connect(
        settings,
        protocol_version=revision,
        capabilities={"elicitation": {}},
        on_request=answer,
    ) as client:
        greeting = await client.call("greeter", arguments={})
    assert assert_succeeded(greeting) == "Hello, Ada!"
    assert [method for method, _ in asked] == ["elicitation/create"]
    assert asked[0][1]["message"] == "Your name?"


async def test_without_on_request_a_2025_request_gets_an_error_answer(settings):
    async with connect(
        settings, protocol_version="2025-11-25", capabilities={"elicitation": {}}
    ) as client:
        answer = await client.call("greeter", arguments={})
    assert [r["method"] for r in answer.requests] == ["elicitation/create"]
    assert answer.is_error


async def test_a_client_of_an_app_you_built_and_extra_headers(settings):
    app = web.Application()
    setup(app, settings.evolve(PATH="/tools/mcp"))
    async with Client(app, path="/tools/mcp", headers={"X-Trace": "t1"}) as client:
        assert len(await client.list_tools()) == 4


async def test_tools_and_overrides_build_the_server(orders_tool):
    async with connect(tools=[orders_tool], SERVER_NAME="shop") as client:
        answer = await client.request("server/discover")
        assert answer.result is not None
        assert (
            answer.result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
            == "shop"
        )
        assert [t["name"] for t in await client.list_tools()] == ["orders", "help"]


async def test_a_failed_start_leaves_nothing_running(settings):
    client = connect(
        settings.evolve(PROTOCOL_VERSIONS=(MODERN,)), protocol_version="2025-11-25"
    )
    with pytest.raises(RuntimeError, match="initialize failed"):
        await client.start()
    with pytest.raises(RuntimeError, match="not started"):
        _ = client.http


def guarded_app(settings: Any) -> web.Application:
    @web.middleware
    async def guard(request: web.Request, handler: Any) -> web.StreamResponse:
        if request.headers.get("Authorization") != "Bearer good":
            return web.Response(status=401, text="no entry")
        return await handler(request)

    app = web.Application(middlewares=[guard])
    setup(app, settings)
    return app


async def test_extra_headers_go_with_every_request_and_a_refusal_is_an_answer(
    settings,
):
    async with Client(guarded_app(settings)) as refused:
        answer = await refused.call("orders", "cancel", {"order_id": 1})
    assert answer.status == 401
    assert answer.response is None
    async with Client(
        guarded_app(settings), headers={"Authorization": "Bearer good"}
    ) as allowed:
        answer = await allowed.call("orders", "cancel", {"order_id": 1})
    assert answer.text == "Order 1 does not exist."


async def test_meta_given_in_params_is_kept_beside_the_protocol_meta(settings):
    async with connect(settings, log_level="info") as client:
        answer = await client.request(
            "tools/call",
            {
                "name": "orders",
                "arguments": {
                    "action": "place",
                    "data": {"customer": "c", "items": ITEMS},
                },
                "_meta": {"progressToken": "mine"},
            },
        )
    assert {p["progressToken"] for p in answer.progress} == {"mine"}
    assert [log["level"] for log in answer.logs] == ["info"]


@pytest.mark.parametrize("revision", [MODERN, "2025-11-25"])
async def test_the_log_level_can_change_during_a_test(settings, revision):
    data = {"customer": "c", "items": ITEMS}
    async with connect(settings, protocol_version=revision, log_level="info") as c:
        before = await c.call("orders", "place", data)
        changed = await c.set_log_level("debug")
        after = await c.call("orders", "place", data)
    assert [log["level"] for log in before.logs] == ["info"]
    assert [log["level"] for log in after.logs] == ["info", "debug"]
    assert (changed is None) is (revision == MODERN)


async def test_extra_headers_go_with_answers_to_the_server_and_the_delete(settings):
    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Bo"}}

    async with Client(
        guarded_app(settings),
        protocol_version="2025-11-25",
        capabilities={"elicitation": {}},
        headers={"Authorization": "Bearer good"},
        on_request=answer,
    ) as client:
        greeting = await client.call("greeter", arguments={})
    assert assert_succeeded(greeting) == "Hello, Bo!"
