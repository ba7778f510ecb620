"""Streamable HTTP for wymcp on aiohttp: `setup(app)`, `create_app()`, `serve()`.

`setup` mounts the endpoint in your app, `create_app` builds one, `serve(settings)`
serves until SIGTERM (`wymcp serve`); `CHECKS` are its checks; `McpClient` is the
client `wymcp.testing` and `wymcp call` share. `GunicornWorker` loads on first use
(`worker_exited` is for its `child_exit`); the auth names are `wymcp.core.server`'s.
"""

from typing import TYPE_CHECKING, Any

from wymcp.core.server import InvalidToken, JwtValidator, Principal, TokenValidator
from wymcp.transport.aiohttp._access_log import JsonLogFormatter
from wymcp.transport.aiohttp._checks import CHECKS
from wymcp.transport.aiohttp._mcp_client import ClientReply, McpClient, McpClientError
from wymcp.transport.aiohttp._metrics_files import worker_exited
from wymcp.transport.aiohttp._serve import serve
from wymcp.transport.aiohttp._setup import create_app, setup

if TYPE_CHECKING:
    from wymcp.transport.aiohttp._gunicorn_worker import GunicornWorker

__all__ = [
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


def __getattr__(name: str) -> Any:
    """Import `GunicornWorker` only when asked for: it needs gunicorn."""
    if name == "GunicornWorker":
        from wymcp.transport.aiohttp._gunicorn_worker import (  # noqa: PLC0415 - needs gunicorn
            GunicornWorker,
        )

        return GunicornWorker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
