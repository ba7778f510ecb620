"""A LIFESPAN exit that hangs or raises: every runner ends, says what happened.

The exit gets SHUTDOWN_GRACE seconds (then it is cancelled, logged, not waited
for: exit 0); an exit that raises is logged once and ends the process with 1.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path

import pytest

WAIT = 60.0
BIN = Path(sys.executable).parent

_EXITS = """
import asyncio
import contextlib


@contextlib.asynccontextmanager
async def hangs(settings):
    try:
        yield "state"
    finally:
        await asyncio.sleep(3600)


@contextlib.asynccontextmanager
async def raises(settings):
    yield "state"
    raise RuntimeError("the pool would not close")
"""

_SETTINGS = """
LIFESPAN = "lifespan_exits.{kind}"
SHUTDOWN_GRACE = 0.5
STATE_SECRET = "lifespan-exit-fixture-key-not-a-secret-0000000000"
"""

_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}},
}


def _env(tmp_path: Path, kind: str) -> dict[str, str]:
    (tmp_path / "lifespan_exits.py").write_text(_EXITS, encoding="utf-8")
    (tmp_path / f"exit_{kind}.py").write_text(
        _SETTINGS.format(kind=kind), encoding="utf-8"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), *sys.path])
    env.pop("WYMCP_SETTINGS_MODULE", None)
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _serve_then_stop(tmp_path: Path, kind: str) -> tuple[int, str]:
    """`wymcp serve` until it listens, then SIGTERM: its status and its log."""
    process = await asyncio.create_subprocess_exec(
        str(BIN / "wymcp"),
        "serve",
        "--settings",
        f"exit_{kind}",
        "--port",
        str(_free_port()),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_env(tmp_path, kind),
    )
    try:
        assert process.stdout is not None
        banner = await asyncio.wait_for(process.stdout.readline(), WAIT)
        assert banner.startswith(b"wymcp serving"), banner
        process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(process.communicate(), WAIT)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, err.decode()


async def _stdio_until_eof(tmp_path: Path, kind: str) -> tuple[int, str]:
    """`wymcp stdio`: one answer, then stdin closes: its status and its log."""
    process = await asyncio.create_subprocess_exec(
        str(BIN / "wymcp"),
        "stdio",
        "--settings",
        f"exit_{kind}",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_env(tmp_path, kind),
    )
    try:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(json.dumps(_INITIALIZE).encode() + b"\n")
        await process.stdin.drain()
        answer = json.loads(await asyncio.wait_for(process.stdout.readline(), WAIT))
        assert answer["id"] == 1
        process.stdin.close()
        _, err = await asyncio.wait_for(process.communicate(), WAIT)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, err.decode()


RUNNERS = {"wymcp serve": _serve_then_stop, "wymcp stdio": _stdio_until_eof}


@pytest.mark.parametrize("runner", RUNNERS)
async def test_an_exit_that_hangs_is_abandoned_after_the_grace_and_exits_0(
    runner: str, tmp_path: Path
) -> None:
    status, log = await RUNNERS[runner](tmp_path, "hangs")
    assert status == 0, log[-2000:]
    assert (
        "wymcp: LIFESPAN's exit was still running 0.5 s after it began"
        " (SHUTDOWN_GRACE); it was cancelled and not waited for"
    ) in log
    assert "calls still running" not in log
    assert "Traceback" not in log


@pytest.mark.parametrize("runner", RUNNERS)
async def test_an_exit_that_raises_is_logged_once_and_exits_1(
    runner: str, tmp_path: Path
) -> None:
    status, log = await RUNNERS[runner](tmp_path, "raises")
    assert status == 1, log[-2000:]
    assert "ERROR wymcp.conf: wymcp: LIFESPAN's exit failed" in log
    assert log.count("Traceback") == 1
    assert log.count("RuntimeError: the pool would not close") == 1
