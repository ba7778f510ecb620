"""The BROKER tests' Redis: one real server (Valkey) per test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from redis_server import RedisServer, server_binary, start_server, stop_server


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One server for the whole test session."""
    server = start_server(server_binary(), tmp_path_factory.mktemp("redis"))
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The URL of the session's server (database 0)."""
    return redis_server.url
