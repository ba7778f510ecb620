"""The pytest plugin (entry point `wymcp`): `wymcp_settings` and `wymcp_client`.

Nothing is read or started when pytest loads it. The server comes from the
test's `@pytest.mark.wymcp(...)` marker, else the `wymcp_settings` ini
option, else `WYMCP_SETTINGS_MODULE`; or override `wymcp_settings`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import pytest
import pytest_asyncio

if TYPE_CHECKING:
    from wymcp.conf import Settings
    from wymcp.testing._client import Client

MARKER = "wymcp"
INI_SETTINGS = "wymcp_settings"
_CLIENT_CHOICES = ("protocol_version", "capabilities", "log_level", "headers")


def pytest_addoption(parser: pytest.Parser) -> None:
    """Declare the `wymcp_settings` ini option (a settings module name)."""
    parser.addini(
        INI_SETTINGS,
        "wymcp: the settings module the wymcp_client fixture serves",
        default="",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the `wymcp` marker (so --strict-markers accepts it)."""
    config.addinivalue_line(
        "markers",
        "wymcp(settings=None, *, tools=None, protocol_version=None, "
        "capabilities=None, log_level=None, headers=None, **SETTINGS): "
        "what the wymcp_client fixture serves and how it connects",
    )


def _marker_kwargs(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The kwargs of every `wymcp` marker, the closest one winning."""
    merged: dict[str, Any] = {}
    for marker in reversed(list(request.node.iter_markers(MARKER))):
        if marker.args:
            merged["settings"] = marker.args[0]
        merged.update(marker.kwargs)
    return merged


@pytest.fixture
def wymcp_settings(request: pytest.FixtureRequest) -> Settings:
    """The settings the `wymcp_client` fixture serves.

    From the test's `@pytest.mark.wymcp(settings=..., tools=[...], FOO=...)`,
    else the `wymcp_settings` ini option, else `WYMCP_SETTINGS_MODULE` (else
    the defaults). Override this fixture to build `Settings` yourself.
    """
    from wymcp.testing._client import served_settings  # noqa: PLC0415 - lazy on purpose

    found = {
        k: v for k, v in _marker_kwargs(request).items() if k not in _CLIENT_CHOICES
    }
    module = found.pop("settings", None)
    tools = found.pop("tools", None)
    if module is None and tools is None:
        module = str(request.config.getini(INI_SETTINGS)) or None
    return served_settings(module, tools, found)


@pytest.fixture
def wymcp_protocol_version(request: pytest.FixtureRequest) -> str:
    """The revision `wymcp_client` speaks (parametrize it to cover several).

    From the marker's `protocol_version`, else 2026-07-28.
    """
    from wymcp.core.server import MODERN  # noqa: PLC0415 - lazy on purpose

    return str(_marker_kwargs(request).get("protocol_version") or MODERN)


@pytest_asyncio.fixture
async def wymcp_client(
    request: pytest.FixtureRequest,
    wymcp_settings: Settings,
    wymcp_protocol_version: str,
) -> AsyncIterator[Client]:
    """A started `wymcp.testing.Client` of the settings' in-process server.

    Closed (session deleted, server stopped) after the test.
    """
    from wymcp.testing._client import connect  # noqa: PLC0415 - lazy on purpose

    choices = _marker_kwargs(request)
    async with connect(
        wymcp_settings,
        protocol_version=wymcp_protocol_version,
        capabilities=choices.get("capabilities"),
        log_level=choices.get("log_level"),
        headers=choices.get("headers"),
    ) as client:
        yield client
