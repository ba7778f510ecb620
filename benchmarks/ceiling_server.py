"""The ceiling: a bare aiohttp handler that parses JSON and answers a canned result.

Not an MCP server; it shows what this load client and this machine can do at most,
on the standard library's event loop or uvloop's (`--loop`).
"""

import argparse
import asyncio
import json
import uuid

from aiohttp import web

_CALL_RESULT = {"content": [{"type": "text", "text": "3"}], "isError": False}
_LIST_RESULT = {"tools": [{"name": "calc", "inputSchema": {"type": "object"}}]}
_INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "ceiling", "version": "0"},
}


async def handle(request: web.Request) -> web.StreamResponse:
    message = json.loads(await request.read())
    if "id" not in message:
        return web.Response(status=202)
    method = message.get("method")
    headers = {}
    if method == "initialize":
        result = _INIT_RESULT
        headers["Mcp-Session-Id"] = uuid.uuid4().hex
    elif method == "tools/list":
        result = _LIST_RESULT
    else:
        result = _CALL_RESULT
    body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
    return web.Response(text=body, content_type="application/json", headers=headers)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio")
    args = parser.parse_args()
    if args.loop == "uvloop":
        import uvloop  # noqa: PLC0415 - only when asked for

        loop = uvloop.new_event_loop()
    else:
        loop = asyncio.new_event_loop()
    app = web.Application(client_max_size=4 * 1024 * 1024)
    app.router.add_post("/mcp", handle)
    web.run_app(
        app,
        host="127.0.0.1",
        port=args.port,
        print=None,
        access_log=None,
        loop=loop,
    )


if __name__ == "__main__":
    main()
