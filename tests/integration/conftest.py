"""A real wymcp server for the integration tests: the conformance fixture,
served in-process by aiohttp on 127.0.0.1 with an OS-chosen port.
"""

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from wymcp.conf import load_settings
from wymcp.transport.aiohttp import create_app


@pytest.fixture
async def server_url() -> AsyncIterator[str]:
    """The endpoint URL of a fixture server that lives for one test."""
    app = create_app(load_settings("wymcp_conformance.settings"))
    runner = web.AppRunner(app, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    try:
        yield f"http://{host}:{port}/mcp"
    finally:
        await runner.cleanup()
