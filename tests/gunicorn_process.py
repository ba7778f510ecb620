"""Gunicorn serving `create_app()` in a child process, for tests needing an arbiter."""

from __future__ import annotations

import asyncio
import socket
import sys
from typing import Any, Final

APP: Final = "wymcp.transport.aiohttp:create_app()"
WYMCP_WORKER: Final = "wymcp.transport.aiohttp.GunicornWorker"
AIOHTTP_WORKER: Final = "aiohttp.GunicornWebWorker"


def free_port() -> int:
    """A loopback port no one listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def gunicorn_argv(
    port: int, *, worker: str = WYMCP_WORKER, workers: int = 1
) -> list[str]:
    """The command line: `create_app()` under `worker`, bound to 127.0.0.1:`port`."""
    return [
        sys.executable,
        "-m",
        "gunicorn",
        APP,
        "--worker-class",
        worker,
        "--workers",
        str(workers),
        "--bind",
        f"127.0.0.1:{port}",
    ]


async def start_gunicorn(
    port: int, *, worker: str = WYMCP_WORKER, workers: int = 1, **options: Any
) -> asyncio.subprocess.Process:
    """Start gunicorn; `options` go to `asyncio.create_subprocess_exec`."""
    return await asyncio.create_subprocess_exec(
        *gunicorn_argv(port, worker=worker, workers=workers), **options
    )
