"""LIFESPAN is entered by every transport and runner, the same way.

One settings module (`lifespan_state`) whose LIFESPAN yields the state a tool
and a resource read, served by `create_app`, `setup(app)`, the testing client
and fixture, `wymcp serve`, the gunicorn worker, `wymcp stdio` and `python -m
wymcp.transport.stdio`; a tool call and a resource read must both see it.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from gunicorn_process import WYMCP_WORKER, free_port, start_gunicorn
from lifespan_state import LABEL
from modern_post import modern_post
from wymcp.conf import load_settings
from wymcp.testing import Client, connect
from wymcp.transport.aiohttp import create_app, setup

MODERN = "2026-07-28"
REVISIONS = (MODERN, "2025-11-25")
TESTS = Path(__file__).resolve().parents[1]
WAIT = 60.0
BIN = Path(sys.executable).parent


def _env(marks: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), *sys.path])
    env["LIFESPAN_MARKS"] = str(marks)
    env.pop("WYMCP_SETTINGS_MODULE", None)
    return env


async def _both_read_the_state(client: Client) -> None:
    called = await client.call("where")
    assert not called.is_error, called.text
    assert called.value["label"] == LABEL
    assert called.value["pid"] == os.getpid()
    read = await client.request("resources/read", {"uri": "state://label"})
    assert read.error is None, read.error
    assert read.result is not None
    assert read.result["contents"][0]["text"] == LABEL


@pytest.mark.parametrize("version", REVISIONS)
async def test_create_app_enters_it(version: str) -> None:
    app = create_app(load_settings("lifespan_state"))
    async with connect(app=app, protocol_version=version) as client:
        await _both_read_the_state(client)


async def _health(_request: web.Request) -> web.Response:
    return web.Response(text="ok")


@pytest.mark.parametrize("version", REVISIONS)
async def test_setup_in_an_existing_application_enters_it(version: str) -> None:
    app = web.Application()
    app.router.add_get("/health", _health)
    setup(app, load_settings("lifespan_state"))
    async with connect(app=app, protocol_version=version) as client:
        await _both_read_the_state(client)


@pytest.mark.parametrize("version", REVISIONS)
async def test_the_testing_client_enters_it(version: str) -> None:
    async with connect("lifespan_state", protocol_version=version) as client:
        await _both_read_the_state(client)


@pytest.mark.wymcp("lifespan_state")
async def test_the_testing_fixture_enters_it(wymcp_client: Client) -> None:
    await _both_read_the_state(wymcp_client)


async def _http_answers(url: str) -> tuple[Any, Any]:
    """The tool call's and the resource read's answers over real HTTP (2026)."""
    answers = []
    async with aiohttp.ClientSession() as http:
        for method, params in (
            ("tools/call", {"name": "where", "arguments": {}}),
            ("resources/read", {"uri": "state://label"}),
        ):
            body, headers = modern_post(method, params)
            async with http.post(url, data=body, headers=headers) as response:
                assert response.status == 200, await response.text()
                answers.append(await response.json())
    return answers[0], answers[1]


def _assert_http_state(called: Any, read: Any, pid: int | None) -> None:
    result = called["result"]
    assert not result.get("isError"), result
    state = json.loads(result["content"][0]["text"])
    assert state["label"] == LABEL
    if pid is not None:
        assert state["pid"] == pid
    assert read["result"]["contents"][0]["text"] == LABEL


async def test_wymcp_serve_enters_it(
    tmp_path: Path, stopped: list[asyncio.subprocess.Process]
) -> None:
    marks = tmp_path / "marks"
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        str(BIN / "wymcp"),
        "serve",
        "--settings",
        "lifespan_state",
        "--port",
        str(port),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_env(marks),
    )
    stopped.append(process)
    assert process.stdout is not None
    banner = await asyncio.wait_for(process.stdout.readline(), WAIT)
    assert banner.startswith(b"wymcp serving"), banner
    called, read = await _http_answers(f"http://127.0.0.1:{port}/mcp")
    _assert_http_state(called, read, process.pid)
    process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(process.wait(), WAIT) == 0
    pid = process.pid
    assert marks.read_text() == f"enter {pid}\nleave {pid}\n"


async def test_the_gunicorn_worker_enters_it(
    tmp_path: Path, stopped: list[asyncio.subprocess.Process]
) -> None:
    marks = tmp_path / "marks"
    port = free_port()
    process = await start_gunicorn(
        port,
        worker=WYMCP_WORKER,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        env={**_env(marks), "WYMCP_SETTINGS_MODULE": "lifespan_state"},
    )
    stopped.append(process)
    url = f"http://127.0.0.1:{port}/mcp"
    for _ in range(int(WAIT / 0.05)):
        try:
            called, read = await _http_answers(url)
            break
        except aiohttp.ClientConnectionError:
            await asyncio.sleep(0.05)
    else:
        pytest.fail("gunicorn never answered")
    _assert_http_state(called, read, None)  # a worker's pid, not the arbiter's
    process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(process.wait(), WAIT) == 0
    [(enter, worker), (leave, same)] = [
        line.split() for line in marks.read_text().splitlines()
    ]
    assert (enter, leave, same) == ("enter", "leave", worker)
    assert json.loads(called["result"]["content"][0]["text"])["pid"] == int(worker)


STDIO_COMMANDS = {
    "wymcp stdio": [str(BIN / "wymcp"), "stdio"],
    "python -m wymcp.transport.stdio": [sys.executable, "-m", "wymcp.transport.stdio"],
}


class _Lines:
    """Newline-delimited JSON-RPC over a child's pipes."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()

    async def ask(self, rid: int, method: str, params: dict[str, Any]) -> Any:
        await self.send(
            {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        )
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), WAIT)
        answer = json.loads(line)
        assert answer["id"] == rid
        return answer


@pytest.mark.parametrize("version", REVISIONS)
@pytest.mark.parametrize("command", STDIO_COMMANDS)
async def test_stdio_enters_it(
    command: str,
    version: str,
    tmp_path: Path,
    stopped: list[asyncio.subprocess.Process],
) -> None:
    marks = tmp_path / "marks"
    process = await asyncio.create_subprocess_exec(
        *STDIO_COMMANDS[command],
        "--settings",
        "lifespan_state",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_env(marks),
    )
    stopped.append(process)
    lines = _Lines(process)
    meta: dict[str, Any] = {}
    if version == MODERN:
        meta = {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        }
    else:
        opened = await lines.ask(
            0, "initialize", {"protocolVersion": version, "capabilities": {}}
        )
        assert opened["result"]["protocolVersion"] == version
        await lines.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    called = await lines.ask(1, "tools/call", {"name": "where", **meta})
    read = await lines.ask(2, "resources/read", {"uri": "state://label", **meta})
    _assert_http_state(called, read, process.pid)
    assert process.stdin is not None
    process.stdin.close()
    assert process.stderr is not None
    _, err = await asyncio.wait_for(
        asyncio.gather(process.wait(), process.stderr.read()), WAIT
    )
    assert process.returncode == 0, err[-2000:]
    assert marks.read_text() == f"enter {process.pid}\nleave {process.pid}\n"


_FAILING = """
import contextlib

@contextlib.asynccontextmanager
async def lifespan(settings):
    raise RuntimeError("the database is down")
    yield

LIFESPAN = "failing_lifespan.lifespan"
STATE_SECRET = "failing-lifespan-fixture-key-not-a-secret-000000"
"""


async def test_stdio_whose_lifespan_fails_exits_1_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "failing_lifespan.py").write_text(_FAILING, encoding="utf-8")
    env = _env(tmp_path / "marks")
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    process = await asyncio.create_subprocess_exec(
        str(BIN / "wymcp"),
        "stdio",
        "--settings",
        "failing_lifespan",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(process.communicate(b""), WAIT)
    assert process.returncode == 1
    assert out == b""
    assert b"RuntimeError: the database is down" in err
