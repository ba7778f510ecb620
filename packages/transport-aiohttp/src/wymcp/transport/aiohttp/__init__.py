"""Streamable HTTP for wymcp on aiohttp: `setup(app)`, `create_app()`, `wymcp`.

`setup` mounts the endpoint in your application, `create_app` builds one,
the `wymcp` command serves or checks a settings module. `GunicornWorker` and
`JwtValidator` (an OAuth resource server, `AUTH`) load on first use, so a
server needing neither starts sooner.
"""

from typing import TYPE_CHECKING, Any

from wymcp.core.server import InvalidToken, Principal, TokenValidator
from wymcp.transport.aiohttp._setup import create_app, setup

if TYPE_CHECKING:
    from wymcp.transport.aiohttp._gunicorn_worker import GunicornWorker
    from wymcp.transport.aiohttp._jwt_validator import JwtValidator

__all__ = [
    "GunicornWorker",
    "InvalidToken",
    "JwtValidator",
    "Principal",
    "TokenValidator",
    "create_app",
    "setup",
]


def __getattr__(name: str) -> Any:
    """Import `GunicornWorker` and `JwtValidator` only when asked for.

    `GunicornWorker` needs gunicorn; `JwtValidator` serves only `AUTH`.
    """
    if name == "JwtValidator":
        from wymcp.transport.aiohttp._jwt_validator import (  # noqa: PLC0415
            JwtValidator,
        )

        return JwtValidator
    if name == "GunicornWorker":
        from wymcp.transport.aiohttp._gunicorn_worker import (  # noqa: PLC0415
            GunicornWorker,
        )

        return GunicornWorker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
