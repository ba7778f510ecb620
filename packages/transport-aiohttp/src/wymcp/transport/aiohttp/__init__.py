"""Streamable HTTP for wymcp on aiohttp: `setup(app)`, `create_app()`, `wymcp`.

`setup` mounts the MCP endpoint in an application you already run;
`create_app` builds one; the `wymcp` command serves or checks a settings
module. `JwtValidator` (with `Principal`, `InvalidToken`, `TokenValidator`)
makes it an OAuth resource server (`AUTH`).
"""

from wymcp.core.server import InvalidToken, Principal, TokenValidator
from wymcp.transport.aiohttp._jwt_validator import JwtValidator
from wymcp.transport.aiohttp._setup import create_app, setup

__all__ = [
    "InvalidToken",
    "JwtValidator",
    "Principal",
    "TokenValidator",
    "create_app",
    "setup",
]
