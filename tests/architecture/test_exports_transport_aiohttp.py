"""The public surface of wymcp.transport.aiohttp is exactly this list."""

from __future__ import annotations

import wymcp.transport.aiohttp


def test_the_facade_exports_setup_create_app_the_worker_and_the_auth_names():
    assert wymcp.transport.aiohttp.__all__ == [
        "GunicornWorker",
        "InvalidToken",
        "JwtValidator",
        "Principal",
        "TokenValidator",
        "create_app",
        "setup",
    ]
    for name in wymcp.transport.aiohttp.__all__:
        assert callable(getattr(wymcp.transport.aiohttp, name))


def test_the_console_script_points_at_main():
    from wymcp.transport.aiohttp._command import main

    assert callable(main)
