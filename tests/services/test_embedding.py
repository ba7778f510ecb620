"""Both embedding examples of docs/embedding.md, run with aiohttp's test client."""

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
}


def load_example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"example_{name}", EXAMPLES / f"{name}.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def read_rpc(response: Any) -> dict[str, Any]:
    """One JSON-RPC message from a JSON or an SSE answer."""
    text = await response.text()
    if response.content_type == "text/event-stream":
        data = [
            line[5:].strip() for line in text.splitlines() if line.startswith("data:")
        ]
        messages = [json.loads(chunk) for chunk in data if chunk]
        [message] = [m for m in messages if "id" in m]
        return dict(message)
    return dict(json.loads(text))


# 1. setup(app) in an application with its own routes and middlewares ----------------


@pytest.fixture
def shop() -> ModuleType:
    return load_example("embed_setup")


@pytest.fixture
async def shop_client(shop: ModuleType, aiohttp_client: Any) -> TestClient:
    return await aiohttp_client(shop.make_app())


def test_setup_leaves_the_hosts_middlewares_and_routes_in_place(
    shop: ModuleType,
) -> None:
    app = shop.make_app()
    assert list(app.middlewares) == [shop.served_by]
    paths = {resource.canonical for resource in app.router.resources()}
    assert {"/health", "/stock/{sku}", "/mcp"} <= paths


async def test_the_hosts_routes_answer_as_before(shop_client: TestClient) -> None:
    health = await shop_client.get("/health")
    assert health.status == 200
    assert await health.json() == {"ok": True}
    assert health.headers["X-Served-By"] == "shop"
    stock = await shop_client.get("/stock/apple")
    assert await stock.json() == {"sku": "apple", "in_stock": 12}
    assert (await shop_client.get("/stock/kiwi")).status == 404


async def test_the_mounted_endpoint_serves_mcp(shop_client: TestClient) -> None:
    initialize = await shop_client.post(
        "/mcp",
        headers=MCP_HEADERS,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        },
    )
    assert initialize.status == 200
    answer = await read_rpc(initialize)
    assert answer["result"]["serverInfo"]["name"] == "shop"
    session = {
        **MCP_HEADERS,
        "Mcp-Session-Id": initialize.headers["Mcp-Session-Id"],
        "MCP-Protocol-Version": "2025-11-25",
    }
    initialized = await shop_client.post(
        "/mcp",
        headers=session,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
    )
    assert initialized.status == 202
    listed = await read_rpc(
        await shop_client.post(
            "/mcp",
            headers=session,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        )
    )
    assert {tool["name"] for tool in listed["result"]["tools"]} == {"stock", "help"}
    called = await read_rpc(
        await shop_client.post(
            "/mcp",
            headers=session,
            json={
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {
                    "name": "stock",
                    "arguments": {"action": "lookup", "data": {"sku": "apple"}},
                },
            },
        )
    )
    assert called["result"]["isError"] is False
    assert json.loads(called["result"]["content"][0]["text"])["in_stock"] == 12


# 2. only the gates, in a plain JSON handler ------------------------------------------


@pytest.fixture
async def orders_client(aiohttp_client: Any) -> TestClient:
    app: web.Application = load_example("embed_gates").make_app()
    return await aiohttp_client(app)


async def test_a_valid_order_is_read_with_defaults(orders_client: TestClient) -> None:
    response = await orders_client.post(
        "/orders",
        json={"customer": "Ada", "items": [{"sku": "apple", "qty": 2.0}]},
    )
    assert response.status == 201
    body = await response.json()
    assert body["accepted"] == {
        "customer": "Ada",
        "items": [{"sku": "apple", "qty": 2}],
        "gift": False,
    }
    assert body["units"] == 2


async def test_every_offending_path_is_named_at_once(orders_client: TestClient) -> None:
    response = await orders_client.post(
        "/orders",
        json={
            "customer": "Ada",
            "items": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 0}],
            "deliver_on": "someday",
        },
    )
    assert response.status == 422
    refusal = await response.json()
    assert refusal["error"] == "invalid_values"
    assert [e["path"] for e in refusal["errors"]] == ["deliver_on", "items[1].qty"]
    assert refusal["message"] == (
        "Invalid value(s) at deliver_on, items[1].qty; see errors."
    )
    assert "someday" not in json.dumps(refusal)
    assert not {"tool", "action", "help", "input_schema"} & set(refusal)


async def test_unknown_and_missing_keys_are_refused(orders_client: TestClient) -> None:
    unknown = await orders_client.post(
        "/orders",
        json={"customer": "Ada", "items": [{"sku": "a", "qty": 1}], "coupon": "X"},
    )
    assert unknown.status == 422
    assert (await unknown.json())["unknown"] == ["coupon"]
    missing = await orders_client.post("/orders", json={"customer": "Ada"})
    assert (await missing.json())["missing"] == ["items"]


async def test_a_typo_is_answered_in_one_round(orders_client: TestClient) -> None:
    response = await orders_client.post(
        "/orders", json={"custmer": "Ada", "items": [{"sku": "a", "qtty": 1}]}
    )
    assert response.status == 422
    assert await response.json() == {
        "error": "unknown_params",
        "message": (
            "Unknown field(s): custmer, items[0].qtty. These are rejected rather"
            " than silently ignored."
        ),
        "unknown": ["custmer", "items[0].qtty"],
        "unknown_count": 2,
        "missing": ["customer"],
        "did_you_mean": {"custmer": "customer", "items[0].qtty": "items[0].qty"},
    }


async def test_a_hostile_order_gets_a_bounded_answer(orders_client: TestClient) -> None:
    items = [{"sku": "", "qty": -1, f"extra{i}": "x" * 500} for i in range(100)]
    response = await orders_client.post(
        "/orders", json={"customer": "Ada", "items": items}
    )
    assert response.status == 422
    refusal = await response.json()
    assert refusal["unknown_count"] == 100
    assert len(refusal["unknown"]) == 10
    assert len(await response.read()) < 8192


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b'"text"'])
async def test_a_body_that_is_no_json_object_is_a_400(
    orders_client: TestClient, body: bytes
) -> None:
    response = await orders_client.post(
        "/orders", data=body, headers={"Content-Type": "application/json"}
    )
    assert response.status == 400
