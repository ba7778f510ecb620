"""A real wymcp server for the integration tests: the conformance fixture,
served in-process by aiohttp on 127.0.0.1 with an OS-chosen port.
"""

import pytest

from served import ServeApp
from wymcp.conf import load_settings
from wymcp.transport.aiohttp import create_app


@pytest.fixture
async def server_url(serve_app: ServeApp) -> str:
    """The endpoint URL of a fixture server that lives for one test."""
    return await serve_app(create_app(load_settings("wymcp_conformance.settings")))
