"""The endpoint against a stub engine: every status the transport answers itself."""

from __future__ import annotations

import asyncio
import gzip
import json

import pytest

from wymcp.transport.aiohttp._setup import ENDPOINT_KEY

JSON = {"Content-Type": "application/json"}


def rpc(method: str, rid: object = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method}).encode()


async def test_a_post_reaches_the_engine_with_headers_and_parsed_body(stub_client):
    client, engine = await stub_client()
    response = await client.post(
        "/mcp", data=rpc("tools/list"), headers={**JSON, "Mcp-Method": "tools/list"}
    )
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/json"
    assert response.headers["X-Engine"] == "stub"
    assert (await response.json())["result"]["echo"]["method"] == "tools/list"
    (exchange,) = engine.exchanges
    assert exchange.method == "POST"
    assert exchange.headers.get("MCP-METHOD") == "tools/list"


async def test_a_reply_without_body_is_empty(stub_client):
    client, _ = await stub_client()
    response = await client.post("/mcp", data=rpc("notify"), headers=JSON)
    assert response.status == 202
    assert await response.read() == b""


@pytest.mark.parametrize("method", ["PUT", "PATCH", "OPTIONS", "HEAD"])
async def test_other_methods_get_405_with_allow(stub_client, method):
    client, engine = await stub_client()
    response = await client.request(method, "/mcp")
    assert response.status == 405
    assert response.headers["Allow"] == "GET, POST, DELETE"
    assert engine.exchanges == []


async def test_get_and_delete_reach_the_engine(stub_client):
    client, engine = await stub_client()
    get = await client.get("/mcp")
    assert get.status == 405
    assert get.headers["Allow"] == "POST"
    delete = await client.delete("/mcp", headers={"Mcp-Session-Id": "x"})
    assert delete.status == 404
    assert await delete.json() == {"error": "Session not found"}
    assert [e.method for e in engine.exchanges] == ["GET", "DELETE"]
    assert engine.exchanges[1].body is None


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "evil.example.com"},
        {"Origin": "http://evil.example.com"},
        {"Host": "evil.example.com", "Origin": "http://evil.example.com"},
        {"Origin": "null"},
        {"Host": "127.0.0.1.evil.example.com"},
    ],
)
async def test_a_foreign_host_or_origin_gets_403_without_reading_the_body(
    stub_client, headers
):
    client, engine = await stub_client()
    response = await client.post(
        "/mcp", data=b"not even json", headers={**JSON, **headers}
    )
    assert response.status == 403
    body = await response.json()
    assert body["error"]["code"] == -32600
    assert body["id"] is None
    assert engine.exchanges == []


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "localhost:8000", "Origin": "http://localhost:8000"},
        {"Host": "127.0.0.1:3000", "Origin": "https://127.0.0.1:5173"},
        {"Host": "[::1]:8000"},
    ],
)
async def test_loopback_hosts_and_origins_are_served(stub_client, headers):
    client, _ = await stub_client()
    response = await client.post("/mcp", data=rpc("x"), headers={**JSON, **headers})
    assert response.status == 200


async def test_allowed_hosts_and_origins_extend_the_loopback_defaults(stub_client):
    client, _ = await stub_client(
        ALLOWED_HOSTS=["mcp.example.com"], ALLOWED_ORIGINS=["https://app.example.com"]
    )
    for headers in (
        {"Host": "mcp.example.com", "Origin": "https://mcp.example.com"},
        {"Host": "mcp.example.com:443", "Origin": "https://app.example.com"},
    ):
        response = await client.post("/mcp", data=rpc("x"), headers={**JSON, **headers})
        assert response.status == 200
    response = await client.post(
        "/mcp", data=rpc("x"), headers={**JSON, "Origin": "https://other.example.com"}
    )
    assert response.status == 403


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/json; charset=latin-1",
    ],
)
async def test_a_body_that_is_not_json_typed_gets_415(stub_client, content_type):
    client, engine = await stub_client()
    headers = {} if content_type is None else {"Content-Type": content_type}
    response = await client.post("/mcp", data=rpc("x"), headers=headers)
    assert response.status == 415
    assert (await response.json())["error"]["code"] == -32600
    assert engine.exchanges == []


async def test_json_with_a_utf8_charset_is_accepted(stub_client):
    client, _ = await stub_client()
    response = await client.post(
        "/mcp",
        data=rpc("x"),
        headers={"Content-Type": "Application/JSON; charset=UTF-8"},
    )
    assert response.status == 200


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "not valid JSON"),
        (b"{", "not valid JSON"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "x"', "not valid JSON"),
        (b'{"a": "\xff"}', "not valid UTF-8"),
        (b'{"a": NaN}', "NaN is not a JSON number"),
        (b'{"a": -Infinity}', "-Infinity is not a JSON number"),
        (b'{"a": 1e400}', "too large"),
        (b'{"a": 1, "a": 2}', "repeats a key"),
        (b"[" * 100_000 + b"]" * 100_000, "nests deeper than 100 levels"),
        (b'{"a": ' + b"9" * 5000 + b"}", "too many digits"),
    ],
)
async def test_a_body_that_is_not_acceptable_json_gets_400_parse_error(
    stub_client, body, reason
):
    client, engine = await stub_client()
    response = await client.post("/mcp", data=body, headers=JSON)
    assert response.status == 400
    answer = await response.json()
    assert answer["id"] is None
    assert answer["error"]["code"] == -32700
    assert reason in answer["error"]["message"]
    assert len(await response.read()) < 300
    assert engine.exchanges == []


async def test_a_301_digit_integer_reaches_the_engine_intact(stub_client):
    client, engine = await stub_client()
    number = "1" + "0" * 300
    response = await client.post(
        "/mcp",
        data=b'{"id": 1, "method": "x", "n": ' + number.encode() + b"}",
        headers=JSON,
    )
    assert response.status == 200
    assert engine.exchanges[0].body["n"] == int(number)
    assert number in (await response.text())


async def test_nesting_at_the_limit_is_accepted(stub_client):
    client, _ = await stub_client(JSON_DEPTH_LIMIT=5)
    ok = await client.post("/mcp", data=b'{"a":[[[{"b":1}]]]}', headers=JSON)
    assert ok.status == 200
    deep = await client.post("/mcp", data=b'{"a":[[[{"b":[]}]]]}', headers=JSON)
    assert deep.status == 400


async def test_brackets_inside_strings_do_not_count_as_nesting(stub_client):
    client, _ = await stub_client(JSON_DEPTH_LIMIT=3)
    body = json.dumps({"s": "[[[[{{{{" * 10, "t": '\\"[[[['}).encode()
    response = await client.post("/mcp", data=body, headers=JSON)
    assert response.status == 200


async def test_a_declared_oversized_body_gets_413(stub_client):
    client, engine = await stub_client(BODY_LIMIT=1000)
    response = await client.post("/mcp", data=b" " * 1001, headers=JSON)
    assert response.status == 413
    answer = await response.json()
    assert answer["error"]["code"] == -32600
    assert "BODY_LIMIT (1000 bytes)" in answer["error"]["message"]
    assert engine.exchanges == []


async def test_a_body_at_the_limit_is_read(stub_client):
    client, _ = await stub_client(BODY_LIMIT=1000)
    body = rpc("x")
    response = await client.post(
        "/mcp", data=body + b" " * (1000 - len(body)), headers=JSON
    )
    assert response.status == 200


async def test_a_chunked_oversized_body_gets_413_before_it_ends(stub_client):
    client, engine = await stub_client(BODY_LIMIT=1000)
    never = asyncio.Event()

    async def endless():
        yield b" " * 2000
        await never.wait()  # the body never ends: only a bounded read can answer
        yield b""

    response = await client.post("/mcp", data=endless(), headers=JSON)
    assert response.status == 413
    assert response.headers.get("Connection", "").lower() == "close"
    assert engine.exchanges == []


async def test_a_body_that_trickles_in_gets_408(stub_client):
    client, engine = await stub_client(BODY_TIMEOUT=0.05)

    async def trickle():
        yield b"{"
        await asyncio.sleep(5)
        yield b"}"

    response = await client.post("/mcp", data=trickle(), headers=JSON)
    assert response.status == 408
    assert (await response.json())["error"]["code"] == -32600
    assert engine.exchanges == []


async def test_an_engine_failure_is_a_bounded_internal_error_and_a_log_line(
    stub_client, caplog
):
    client, _ = await stub_client()
    response = await client.post("/mcp", data=rpc("boom", rid="r-7"), headers=JSON)
    assert response.status == 200
    text = await response.text()
    assert json.loads(text) == {
        "jsonrpc": "2.0",
        "id": "r-7",
        "error": {
            "code": -32603,
            "message": "Internal error. The server logged the cause.",
        },
    }
    assert "secret" not in text
    assert "Traceback" not in text
    assert any("unexpected error" in r.getMessage() for r in caplog.records)


async def test_an_unserialisable_reply_is_an_internal_error(stub_client):
    client, _ = await stub_client()
    response = await client.post(
        "/mcp", data=rpc("unserialisable", rid=5), headers=JSON
    )
    assert response.status == 200
    assert (await response.json())["error"]["code"] == -32603


async def test_a_huge_id_is_not_echoed_in_an_internal_error(stub_client):
    client, _ = await stub_client()
    response = await client.post(
        "/mcp", data=rpc("boom", rid="x" * 10_000), headers=JSON
    )
    assert (await response.json())["id"] is None


async def test_a_failure_in_the_transport_itself_is_an_internal_error(stub_client):
    client, engine = await stub_client()
    endpoint = client.server.app[ENDPOINT_KEY]

    class Exploding:
        def host_allowed(self, values):
            raise ValueError("a bug")

    endpoint.admission._policy = Exploding()
    response = await client.post("/mcp", data=rpc("x"), headers=JSON)
    assert response.status == 200
    assert (await response.json())["error"]["code"] == -32603
    assert engine.exchanges == []


async def test_expect_100_continue_is_refused_before_the_body_is_sent(stub_client):
    client, engine = await stub_client(BODY_LIMIT=1000)
    response = await client.post("/mcp", data=b" " * 2000, headers=JSON, expect100=True)
    assert response.status == 413
    response = await client.post(
        "/mcp",
        data=rpc("x"),
        headers={**JSON, "Origin": "http://evil.example.com"},
        expect100=True,
    )
    assert response.status == 403
    assert engine.exchanges == []


async def test_expect_100_continue_is_honoured_for_an_acceptable_request(stub_client):
    client, engine = await stub_client()
    response = await client.post("/mcp", data=rpc("x"), headers=JSON, expect100=True)
    assert response.status == 200
    assert len(engine.exchanges) == 1


async def test_an_unknown_expectation_gets_417(stub_client):
    client, engine = await stub_client()
    response = await client.post(
        "/mcp", data=rpc("x"), headers={**JSON, "Expect": "something-else"}
    )
    assert response.status == 417
    assert engine.exchanges == []


async def test_the_transport_counts_no_streams_it_hands_the_engine_the_peer(
    stub_client,
):
    # MAX_STREAMS is the engine's to enforce (tests/core_server/test_stream_cap.py)
    client, engine = await stub_client(MAX_STREAMS=1, MAX_STREAMS_PER_CLIENT=1)
    first = await client.get("/mcp", headers={"Mcp-Session-Id": "hang"})
    assert first.status == 200
    await engine.started.wait()
    second = await client.get("/mcp", headers={"Mcp-Session-Id": "hang"})
    assert second.status == 200
    first.close()
    second.close()
    assert [e.peer for e in engine.exchanges] == ["127.0.0.1", "127.0.0.1"]
    assert [e.challenge for e in engine.exchanges] == [None, None]


async def test_under_a_runner_that_inflates_the_limits_still_hold(stub_client):
    # aiohttp's test server inflates gzip itself: the endpoint reads what it
    # made under BODY_LIMIT, and data that is not gzip is a bounded 400
    import gzip

    client, engine = await stub_client(ACCEPT_CONTENT_ENCODING=("gzip",))
    coded = {**JSON, "Content-Encoding": "gzip"}
    response = await client.post("/mcp", data=gzip.compress(rpc("x")), headers=coded)
    assert response.status == 200
    assert engine.exchanges[-1].body["method"] == "x"
    response = await client.post("/mcp", data=b"\x1f\x8b\x08\x00junk", headers=coded)
    assert response.status == 400  # aiohttp may give up silently: then not JSON
    assert (await response.json())["error"]["code"] in {-32600, -32700}
    client, _ = await stub_client(ACCEPT_CONTENT_ENCODING=("gzip",), BODY_LIMIT=1000)
    bomb = gzip.compress(b" " * 100_000)
    response = await client.post("/mcp", data=bomb, headers=coded)
    assert response.status == 413


async def test_a_small_body_tells_the_engine_its_json_length_a_large_one_does_not(
    stub_client,
):
    # the gates skip counting the values of data from a small text (check_fast)
    client, engine = await stub_client(ACCEPT_CONTENT_ENCODING=("gzip",))
    small = b'{"id": 1, "method": "x", "n": [1, 2, 3]}'
    large = b'{"id": 2, "method": "x", "n": [' + b"1, " * 3000 + b"1]}"
    gzipped = gzip.compress(small)
    for data, extra in (
        (small, {}),
        (large, {}),
        (gzipped, {"Content-Encoding": "gzip"}),
    ):
        response = await client.post("/mcp", data=data, headers={**JSON, **extra})
        assert response.status == 200
    assert [e.json_bytes for e in engine.exchanges] == [len(small), None, None]
