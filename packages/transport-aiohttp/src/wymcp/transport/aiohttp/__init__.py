"""Streamable HTTP for wymcp on aiohttp: `setup(app)`, `create_app()`, `wymcp`.

`setup` mounts the endpoint in your application, `create_app` builds one, the
`wymcp` command serves or checks a settings module. `GunicornWorker` loads on
first use (`worker_exited` is for its `child_exit`); the auth names are
`wymcp.core.server`'s; `JsonLogFormatter` writes `LOG_FORMAT = "json"` lines.
"""

from typing import TYPE_CHECKING, Any

from wymcp.core.server import InvalidToken, JwtValidator, Principal, TokenValidator
from wymcp.transport.aiohttp._access_log import JsonLogFormatter
from wymcp.transport.aiohttp._metrics_files import worker_exited
from wymcp.transport.aiohttp._setup import create_app, setup

if TYPE_CHECKING:
    from wymcp.transport.aiohttp._gunicorn_worker import GunicornWorker

__all__ = [
    "GunicornWorker",
    "InvalidToken",
    "JsonLogFormatter",
    "JwtValidator",
    "Principal",
    "TokenValidator",
    "create_app",
    "setup",
    "worker_exited",
]


def __getattr__(name: str) -> Any:
    """Import `GunicornWorker` only when asked for: it needs gunicorn."""
    if name == "GunicornWorker":
        from wymcp.transport.aiohttp._gunicorn_worker import (  # noqa: PLC0415
            GunicornWorker,
        )

        return GunicornWorker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
