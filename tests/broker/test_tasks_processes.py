"""Tasks across two `wymcp serve` processes sharing one Redis (`BROKER`).

A task created on one process is polled, answered, cancelled and collected
on the other; a process killed while its task runs leaves that task `failed`
with the reason; tasks stay their principal's; they expire after their TTL.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest

from redis_server import RedisServer, free_port
from task_wire import create, get, send, until
from wymcp.broker.redis._task_store import LOST

TTL = 4.0
"""TASK_TTL of the workers: short enough to watch a task expire."""
LEASE = 1.0
"""TASK_LEASE of the workers: how soon a killed worker's task shows failed."""
KILLED_TTL = 120.0
"""TASK_TTL of the worker killed and restarted: its task must outlive a restart,
which takes seconds on a loaded machine (with `TTL` the task expired first)."""
KILLED_LEASE = 3.0
"""TASK_LEASE of that worker: its task is polled `working` within 2 s of the kill."""

PROBE = '''
import asyncio
from pathlib import Path
from typing import Any, ClassVar

from wymcp.core.schema import Tool
from wymcp.core.server import InvalidToken, Principal

MARKS = Path({marks!r})


async def principal(token: str) -> Principal:
    if token not in ("alice", "bob"):
        raise InvalidToken("unknown token")
    return Principal(token)


class Sleeper(Tool):
    """Sleeps until cancelled; leaves a mark of how it ended."""

    name = "sleeper"
    description = "Sleep until cancelled."
    task_support = "required"
    input_schema: ClassVar[dict[str, Any]] = {{
        "type": "object",
        "properties": {{"mark": {{"type": "string", "pattern": "^[a-z0-9-]+$"}}}},
        "required": ["mark"],
    }}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        mark = MARKS / arguments["mark"]
        mark.write_text("running")
        try:
            await asyncio.sleep(600)
        except asyncio.CancelledError:
            mark.write_text("cancelled")
            raise
        return "woke"
'''

SETTINGS = """
from wymcp_conformance.settings import *  # noqa: F403 - extends it

TOOLS = [*TOOLS, "task_probe.Sleeper"]  # noqa: F405 - names from the star import
BROKER = {broker!r}
TASK_TTL = {ttl!r}
TASK_LEASE = {lease!r}
AUTH = "task_probe.principal"
AUTH_AUTHORIZATION_SERVERS = ["https://auth.example.com"]
"""


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class Workers:
    """`wymcp serve` processes, each of its settings module, on its own port."""

    def __init__(self, folder: Path, settings: list[str]) -> None:
        self.env = {**os.environ, "PYTHONPATH": str(folder)}
        self.command = Path(sys.executable).parent / "wymcp"
        self.settings = settings
        self.ports = [free_port() for _ in settings]
        self.processes: list[subprocess.Popen[bytes] | None] = [None] * len(settings)

    def url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.ports[index]}/mcp"

    def start(self, index: int) -> None:
        process = subprocess.Popen(  # noqa: S603 - our own command, fixed arguments
            [
                str(self.command),
                "serve",
                "--settings",
                self.settings[index],
                "--port",
                str(self.ports[index]),
            ],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.processes[index] = process
        for _ in range(3000):
            if _listening(self.ports[index]) or process.poll() is not None:
                break
            time.sleep(0.01)
        assert process.poll() is None, "wymcp serve exited"

    def kill(self, index: int) -> None:
        """SIGKILL: the process gets no chance to end its tasks."""
        process = self.processes[index]
        assert process is not None
        process.send_signal(signal.SIGKILL)
        process.wait()

    def stop_all(self) -> None:
        running = [p for p in self.processes if p is not None and p.poll() is None]
        for process in running:
            process.terminate()
        for process in running:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="module")
def marks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("marks")


@pytest.fixture(scope="module")
def workers(
    tmp_path_factory: pytest.TempPathFactory, redis_server: RedisServer, marks: Path
) -> Iterator[Workers]:
    """Workers of the conformance fixture plus `sleeper`, with BROKER.

    Two with `TTL` and `LEASE`, and a third (index 2, killed by a test) whose
    tasks live `KILLED_TTL`.
    """
    folder = tmp_path_factory.mktemp("tasks_settings")
    (folder / "task_probe.py").write_text(PROBE.format(marks=str(marks)), "utf-8")
    broker = redis_server.url.rsplit("/", 1)[0] + "/2"
    for name, ttl, lease in (
        ("tasks_settings", TTL, LEASE),
        ("tasks_killed", KILLED_TTL, KILLED_LEASE),
    ):
        (folder / f"{name}.py").write_text(
            SETTINGS.format(broker=broker, ttl=ttl, lease=lease), "utf-8"
        )
    started = Workers(folder, ["tasks_settings", "tasks_settings", "tasks_killed"])
    try:
        for index in range(3):
            started.start(index)
        yield started
    finally:
        started.stop_all()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def mark_of(marks: Path, name: str, expected: str) -> str:
    """The mark `sleeper` left, once it reads `expected` (10 s at most)."""
    for _ in range(200):
        path = marks / name
        if path.exists() and path.read_text() == expected:
            break
        await asyncio.sleep(0.05)
    return (marks / name).read_text()


async def test_created_on_one_polled_and_collected_on_the_other(workers, http):
    one, two = workers.url(0), workers.url(1)
    arguments = {"seconds": 0.5, "label": "sum"}
    task_id = await create(http, one, "slow_compute", arguments, token="alice")
    assert (await get(http, two, task_id, token="alice"))["status"] == "working"
    done = await until(http, two, task_id, {"completed"}, token="alice")
    text = done["result"]["content"][0]["text"]
    assert text == "Computed sum after 0.5 seconds."
    assert done["ttlMs"] == TTL * 1000
    assert (await get(http, one, task_id, token="alice")) == done


async def test_cancelled_on_the_other_stops_the_work(workers, http, marks):
    one, two = workers.url(0), workers.url(1)
    task_id = await create(http, one, "sleeper", {"mark": "cancel"}, token="alice")
    assert await mark_of(marks, "cancel", "running") == "running"
    status, _, ack = await send(
        http, two, "tasks/cancel", {"taskId": task_id}, token="alice"
    )
    assert (status, ack["result"]["resultType"]) == (200, "complete")
    # the coroutine on worker one met the cancel (published through Redis)
    assert await mark_of(marks, "cancel", "cancelled") == "cancelled"
    task = await get(http, one, task_id, token="alice")
    assert task["status"] == "cancelled"


async def test_a_question_is_answered_on_the_other_worker(workers, http):
    one, two = workers.url(0), workers.url(1)
    arguments = {"filename": "notes.txt"}
    task_id = await create(http, one, "confirm_delete", arguments, token="alice")
    parked = await until(http, two, task_id, {"input_required"}, token="alice")
    (key,) = parked["inputRequests"]
    assert parked["inputRequests"][key]["method"] == "elicitation/create"
    answer = {"action": "accept", "content": {"confirm": True}}
    status, _, ack = await send(
        http,
        two,
        "tasks/update",
        {"taskId": task_id, "inputResponses": {key: answer}},
        token="alice",
    )
    assert status == 200, ack
    done = await until(http, one, task_id, {"completed"}, token="alice")
    assert done["result"]["content"][0]["text"] == "Deleted notes.txt."


async def test_tasks_are_their_principals_on_every_worker(workers, http):
    one, two = workers.url(0), workers.url(1)
    task_id = await create(http, one, "sleeper", {"mark": "mine"}, token="alice")
    for method in ("tasks/get", "tasks/cancel", "tasks/update"):
        params = {"taskId": task_id, "inputResponses": {}}
        status, _, body = await send(http, two, method, params, token="bob")
        assert (status, body["error"]["code"]) == (400, -32602), body
        assert task_id not in str(body)
    assert (await get(http, two, task_id, token="alice"))["status"] == "working"
    await send(http, two, "tasks/cancel", {"taskId": task_id}, token="alice")


async def test_a_task_and_its_work_end_at_its_ttl(workers, http, marks):
    one, two = workers.url(0), workers.url(1)
    quick = await create(http, one, "slow_compute", {"seconds": 0}, token="bob")
    running = await create(http, one, "sleeper", {"mark": "ttl"}, token="bob")
    assert await until(http, two, quick, {"completed"}, token="bob")
    await asyncio.sleep(TTL)
    for task_id in (quick, running):
        status, _, body = await send(
            http, two, "tasks/get", {"taskId": task_id}, token="bob"
        )
        assert (status, body["error"]["code"]) == (400, -32602)
    # worker one heard of the expiry at its next renewal and stopped the work
    assert await mark_of(marks, "ttl", "cancelled") == "cancelled"


async def test_a_killed_worker_leaves_its_task_failed_with_the_reason(
    workers, http, marks
):
    """Worker 2 creates (its task lives `KILLED_TTL`): it must outlive the restart.

    Before, the task was worker 0's and lived `TTL` (4 s) from its creation;
    on a loaded machine the restart took long enough for the task to expire
    first, and the last poll answered "Unknown taskId" (as it should, at TTL).
    """
    killed, two = workers.url(2), workers.url(1)
    task_id = await create(http, killed, "sleeper", {"mark": "killed"}, token="alice")
    assert await mark_of(marks, "killed", "running") == "running"
    workers.kill(2)
    killed_at = time.monotonic()  # the last renewal was before this
    assert (await get(http, two, task_id, token="alice"))["status"] == "working"
    # the lease runs out unrenewed, at most KILLED_LEASE after the kill
    await asyncio.sleep(max(0.0, killed_at + KILLED_LEASE * 1.5 - time.monotonic()))
    failed = await get(http, two, task_id, token="alice")
    assert failed["status"] == "failed"
    assert failed["error"] == {"code": -32603, "message": LOST}
    workers.start(2)  # restarted, the worker does not revive it
    assert (await get(http, killed, task_id, token="alice")) == failed
    assert failed["ttlMs"] == KILLED_TTL * 1000  # the task was worker 2's
