"""The limit: a bare asyncio Protocol on uvloop, httptools' C parser, no framework.

Not an MCP server and not an HTTP server anyone should run: it reads each request
with httptools, decodes the JSON body (for its id and method) and answers the same
canned results as `ceiling_server.py`, over keep-alive HTTP/1.1. It shows what the
loop and a C HTTP parser allow on this machine; it runs in its own environment
(`locks/bench-raw.txt`: uvloop and httptools).
"""

import argparse
import asyncio
import json
import uuid

import httptools  # type: ignore[import-not-found]  # in locks/bench-raw.txt only
import uvloop  # type: ignore[import-not-found,unused-ignore]

_CALL_RESULT = {"content": [{"type": "text", "text": "3"}], "isError": False}
_LIST_RESULT = {"tools": [{"name": "calc", "inputSchema": {"type": "object"}}]}
_INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "raw", "version": "0"},
}
_BODY_LIMIT = 4 * 1024 * 1024


def _answer(body: bytes) -> bytes:
    """The whole HTTP response to one request body."""
    message = json.loads(body)
    if "id" not in message:
        return b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
    method = message.get("method")
    extra = b""
    result: object
    if method == "initialize":
        result = _INIT_RESULT
        extra = b"Mcp-Session-Id: %s\r\n" % uuid.uuid4().hex.encode()
    elif method == "tools/list":
        result = _LIST_RESULT
    else:
        result = _CALL_RESULT
    payload = json.dumps(
        {"jsonrpc": "2.0", "id": message["id"], "result": result}
    ).encode()
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n%s"
        b"Content-Length: %d\r\n\r\n%s" % (extra, len(payload), payload)
    )


class Responder(asyncio.Protocol):
    """One connection: parse requests as they arrive, answer each at its end."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpRequestParser(self)
        self.body: list[bytes] = []
        self.size = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self._fail(b"400 Bad Request")

    def on_message_begin(self) -> None:
        self.body = []
        self.size = 0

    def on_body(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > _BODY_LIMIT:
            self._fail(b"413 Content Too Large")
            return
        self.body.append(chunk)

    def on_message_complete(self) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        try:
            self.transport.write(_answer(b"".join(self.body)))
        except (ValueError, TypeError, AttributeError):
            self._fail(b"400 Bad Request")

    def _fail(self, status: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(
                b"HTTP/1.1 %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                % status
            )
            self.transport.close()


async def serve(port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Responder, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvloop.run(serve(args.port))


if __name__ == "__main__":
    main()
