"""The public surface of wymcp.transport.aiohttp is exactly this list."""

from __future__ import annotations

import wymcp.transport.aiohttp


def test_the_facade_exports_setup_create_app_the_worker_and_the_auth_names():
    assert wymcp.transport.aiohttp.__all__ == [
        "CHECKS",
        "ClientReply",
        "GunicornWorker",
        "InvalidToken",
        "JsonLogFormatter",
        "JwtValidator",
        "McpClient",
        "McpClientError",
        "Principal",
        "TokenValidator",
        "create_app",
        "serve",
        "setup",
        "worker_exited",
    ]
    for name in wymcp.transport.aiohttp.__all__:
        if name != "CHECKS":
            assert callable(getattr(wymcp.transport.aiohttp, name))
    assert all(callable(check) for check in wymcp.transport.aiohttp.CHECKS)


def test_jwt_validator_is_the_core_servers_re_exported():
    # it needs no aiohttp, and a stdio server validates tokens too
    from wymcp.core.server import JwtValidator

    assert wymcp.transport.aiohttp.JwtValidator is JwtValidator
    assert JwtValidator.__module__ == "wymcp.core.server._jwt_validator"
