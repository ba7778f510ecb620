"""wymcp.transport.stdio: the MCP stdio transport.

`run(module)` is `wymcp stdio --settings MODULE`; `serve(engine, settings)`
serves an engine on a pair of file descriptors (newline-delimited JSON-RPC).
"""

from wymcp.transport.stdio._run import run
from wymcp.transport.stdio._serve import build_stdio_engine, serve

__all__ = ["build_stdio_engine", "run", "serve"]
