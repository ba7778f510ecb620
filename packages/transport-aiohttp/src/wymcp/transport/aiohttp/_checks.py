"""The HTTP transport's own `wymcp check` checks: hosts, connections, bodies, auth.

`CHECKS` is what `wymcp serve`, `GunicornWorker` and `wymcp check` pass to
conf's `run_checks`/`engine_for_command`; ids and texts are the documented ones.
"""

from __future__ import annotations

import importlib.util
from typing import Final

from wymcp.conf import Check, CheckMessage, Serving, Settings, is_loopback
from wymcp.core.server import ECHO_LIMIT

REMOTE_HOST_NOT_ALLOWED: Final = "wymcp.W003"
HOST_CHECK_DISABLED: Final = "wymcp.W004"
RESOURCE_NOT_SET: Final = "wymcp.W006"
OFFLINE_ACCESS_LISTED: Final = "wymcp.W007"
METRICS_CLIENT_MISSING: Final = "wymcp.E011"
STREAMS_TAKE_ALL_CONNECTIONS: Final = "wymcp.W012"
BODY_OVER_MEMORY_BUDGET: Final = "wymcp.W013"


def host_problems(settings: Settings, serving: Serving | None) -> list[CheckMessage]:
    """W003 (a remote HOST with loopback Host headers only) and W004 (`*`)."""
    del serving
    found: list[CheckMessage] = []
    if not is_loopback(settings.HOST) and not settings.ALLOWED_HOSTS:
        found.append(
            CheckMessage(
                "warning",
                REMOTE_HOST_NOT_ALLOWED,
                f"HOST {settings.HOST[:ECHO_LIMIT]!r} is not a loopback address, "
                "but only "
                "loopback Host headers are allowed, so remote clients get 403.",
                "List the names clients use in ALLOWED_HOSTS, e.g. "
                '["mcp.example.com"].',
            )
        )
    if "*" in settings.ALLOWED_HOSTS or "*" in settings.ALLOWED_ORIGINS:
        found.append(
            CheckMessage(
                "warning",
                HOST_CHECK_DISABLED,
                'ALLOWED_HOSTS or ALLOWED_ORIGINS holds "*", which turns off the '
                "protection against DNS rebinding.",
                "List the exact hosts and origins instead.",
            )
        )
    return found


def capacity_problems(
    settings: Settings, serving: Serving | None
) -> list[CheckMessage]:
    """W012 (streams can take every connection) and W013 (a body budget < a body)."""
    del serving
    found: list[CheckMessage] = []
    if settings.MAX_STREAMS >= settings.MAX_CONNECTIONS:
        found.append(
            CheckMessage(
                "warning",
                STREAMS_TAKE_ALL_CONNECTIONS,
                f"MAX_STREAMS ({settings.MAX_STREAMS}) is not below MAX_CONNECTIONS "
                f"({settings.MAX_CONNECTIONS}), so open streams can take every "
                "connection and every other client gets 503.",
                "Keep MAX_STREAMS well below MAX_CONNECTIONS (the defaults are "
                "500 and 1000).",
            )
        )
    budget = settings.BODY_MEMORY_BUDGET
    if budget is not None and budget < settings.BODY_LIMIT:
        found.append(
            CheckMessage(
                "warning",
                BODY_OVER_MEMORY_BUDGET,
                f"BODY_MEMORY_BUDGET ({budget}) is below BODY_LIMIT "
                f"({settings.BODY_LIMIT}), so a body between the two is always "
                "answered 503.",
                "Keep BODY_MEMORY_BUDGET at least BODY_LIMIT (the defaults are "
                "both 4 MiB).",
            )
        )
    return found


def auth_problems(settings: Settings, serving: Serving | None) -> list[CheckMessage]:
    """W006 (no AUTH_RESOURCE) and W007 (offline_access advertised)."""
    del serving
    if settings.AUTH is None:
        return []
    found: list[CheckMessage] = []
    if settings.AUTH_RESOURCE is None:
        found.append(
            CheckMessage(
                "warning",
                RESOURCE_NOT_SET,
                "AUTH is set but AUTH_RESOURCE is not, so the resource identifier "
                "in the metadata is derived from each request's Host header.",
                'Set AUTH_RESOURCE = "https://mcp.example.com/mcp", the audience '
                "your authorization server issues tokens for.",
            )
        )
    if (
        "offline_access"
        in settings.AUTH_SCOPES_SUPPORTED + settings.AUTH_REQUIRED_SCOPES
    ):
        found.append(
            CheckMessage(
                "warning",
                OFFLINE_ACCESS_LISTED,
                "offline_access is listed in AUTH_SCOPES_SUPPORTED or "
                "AUTH_REQUIRED_SCOPES; MCP servers should not advertise it.",
                "Remove offline_access; clients ask the authorization server for "
                "refresh tokens themselves.",
            )
        )
    return found


def metrics_problems(settings: Settings, serving: Serving | None) -> list[CheckMessage]:
    """E011: METRICS on without prometheus_client (the `[metrics]` extra)."""
    del serving
    if not settings.METRICS or importlib.util.find_spec("prometheus_client"):
        return []
    return [
        CheckMessage(
            "error",
            METRICS_CLIENT_MISSING,
            "METRICS is on but the prometheus_client package is not installed.",
            'Install it: pip install "wymcp-transport-aiohttp[metrics]".',
        )
    ]


CHECKS: Final[tuple[Check, ...]] = (
    host_problems,
    capacity_problems,
    auth_problems,
    metrics_problems,
)
"""The HTTP transport's checks, in the order they run (reported sorted by id)."""
