"""Launching `wymcp stdio` for the tests: the command, its environment, a raw
client that speaks newline-delimited JSON over the child's pipes.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

WYMCP = str(Path(sys.executable).with_name("wymcp"))
FIXTURE = "stdio_fixture_settings"
SMALL = "stdio_small_settings"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
WAIT = 60.0
"""Seconds a test waits for the child before it fails instead of hanging."""


def child_env() -> dict[str, str]:
    """The environment of `wymcp stdio`: the fixture modules importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(HERE), env.get("PYTHONPATH", "")) if p
    )
    env.pop("WYMCP_SETTINGS_MODULE", None)
    return env


def modern(method: str, params: dict[str, Any] | None = None, rid: Any = 1) -> Any:
    """A 2026-07-28 request (stdio carries no headers, only `_meta`)."""
    body_params = {**(params or {}), "_meta": dict(MODERN_META)}
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": body_params}


class RawClient:
    """A `wymcp stdio` child and the raw lines it writes."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def send(self, message: Any) -> None:
        await self.send_bytes(json.dumps(message).encode() + b"\n")

    async def receive(self) -> Any:
        """The next line on stdout, which must be one JSON-RPC message."""
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), WAIT)
        assert line.endswith(b"\n"), f"stdout ended: {line!r}"
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0"
        return message

    async def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        await self.process.stdin.wait_closed()

    async def finish(self) -> tuple[int, bytes, bytes]:
        """Close stdin, wait for the exit: (status, rest of stdout, stderr)."""
        await self.close_stdin()
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        out, err = await asyncio.wait_for(
            asyncio.gather(self.process.stdout.read(), self.process.stderr.read()),
            WAIT,
        )
        status = await asyncio.wait_for(self.process.wait(), WAIT)
        return status, out, err


async def spawn(settings: str = FIXTURE, *args: str) -> RawClient:
    process = await asyncio.create_subprocess_exec(
        WYMCP,
        "stdio",
        "--settings",
        settings,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=child_env(),
        limit=16 * 1024 * 1024,
    )
    return RawClient(process)
