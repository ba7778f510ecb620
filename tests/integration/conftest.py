"""A real wymcp server for the integration tests: the conformance fixture,
served in-process by aiohttp on 127.0.0.1 with an OS-chosen port; and the
child processes a test starts, killed at its end.
"""

import asyncio
from collections.abc import AsyncIterator

import pytest

from served import ServeApp
from wymcp.conf import load_settings
from wymcp.transport.aiohttp import create_app


@pytest.fixture
async def server_url(serve_app: ServeApp) -> str:
    """The endpoint URL of a fixture server that lives for one test."""
    return await serve_app(create_app(load_settings("wymcp_conformance.settings")))


@pytest.fixture
async def stopped() -> AsyncIterator[list[asyncio.subprocess.Process]]:
    """Processes a test started, killed at its end if still running."""
    started: list[asyncio.subprocess.Process] = []
    try:
        yield started
    finally:
        for process in started:
            if process.returncode is None:
                process.kill()
                await process.wait()
