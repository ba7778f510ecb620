"""Applications served on a real port for one test (the `serve_app` fixture's body)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import web

ServeApp = Callable[..., Awaitable[str]]
"""`await serve_app(app, handler_cancellation=True, path="/mcp")` -> the URL."""


async def serving() -> AsyncIterator[ServeApp]:
    """Yield a function serving an app on 127.0.0.1 (a port the OS picks).

    Each call starts one and returns the URL of its `path`; all stop at the end.
    """
    runners: list[web.AppRunner] = []

    async def serve(
        app: web.Application, *, handler_cancellation: bool = True, path: str = "/mcp"
    ) -> str:
        runner = web.AppRunner(app, handler_cancellation=handler_cancellation)
        await runner.setup()
        runners.append(runner)
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        host, port = runner.addresses[0][:2]
        return f"http://{host}:{port}{path}"

    try:
        yield serve
    finally:
        for runner in reversed(runners):
            await runner.cleanup()
