"""Streamable HTTP for wymcp on aiohttp: `setup(app)`, `create_app()`, `wymcp`.

`setup` mounts the MCP endpoint in an application you already run;
`create_app` builds one; the `wymcp` command serves or checks a settings
module.
"""

from wymcp.transport.aiohttp._setup import create_app, setup

__all__ = ["create_app", "setup"]
