"""The README's serve command, driven by the official MCP Python SDK client.

Starts `wymcp serve --settings wymcp_tasks.settings` as a subprocess on a free
port with a temporary database, creates a task, restarts the server and finds
the task still there.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

WYMCP = Path(sys.executable).with_name("wymcp")
# How long a server may take to start on a busy machine before the test gives up;
# a readiness bound, not a speed assertion.
START_DEADLINE_SECONDS = 60.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@contextmanager
def served(database: Path, port: int) -> Iterator[str]:
    """Run the demo like the README does until the block ends (SIGTERM)."""
    environment = {**os.environ, "TASKS_DEMO_DB": str(database)}
    environment.pop("WYMCP_SETTINGS_MODULE", None)
    log_path = database.with_suffix(f".{port}.log")
    log = log_path.open("ab")
    process = subprocess.Popen(  # noqa: S603 -- our own console script, fixed arguments
        [
            str(WYMCP),
            "serve",
            "--settings",
            "wymcp_tasks.settings",
            "--port",
            str(port),
        ],
        cwd=database.parent,
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + START_DEADLINE_SECONDS
        while not accepts_connections(port):
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                process.wait()
                log.close()
                output = log_path.read_text(errors="replace")
                pytest.fail(f"wymcp serve did not come up:\n{output[-4000:]}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=START_DEADLINE_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


@asynccontextmanager
async def connected(url: str, mode: str) -> AsyncIterator[Client]:
    async with Client(url, mode=mode) as client:  # type: ignore[arg-type]
        yield client


def payload(result: Any) -> dict[str, Any]:
    assert result.is_error is False, result.content
    [block] = result.content
    decoded = json.loads(block.text)
    assert isinstance(decoded, dict)
    return decoded


def test_wymcp_check_accepts_the_demo_settings(tmp_path: Path) -> None:
    environment = {**os.environ, "TASKS_DEMO_DB": str(tmp_path / "tasks.sqlite3")}
    checked = subprocess.run(  # noqa: S603 -- our own console script, fixed arguments
        [str(WYMCP), "check", "--settings", "wymcp_tasks.settings"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 error(s)" in checked.stdout
    assert not (tmp_path / "tasks.sqlite3").exists()


@pytest.mark.parametrize(
    ("mode", "revision"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")]
)
async def test_a_task_survives_a_restart(
    tmp_path: Path, mode: str, revision: str
) -> None:
    database = tmp_path / "tasks.sqlite3"
    port = free_port()
    with served(database, port) as url:
        async with connected(url, mode) as client:
            assert client.protocol_version == revision
            assert client.server_info is not None
            assert client.server_info.name == "wymcp-tasks"
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert {"tasks", "projects", "help"} <= set(names)
            created = payload(
                await client.call_tool(
                    "projects", {"action": "create", "data": {"project": "home"}}
                )
            )
            assert created["project"]["name"] == "home"
            created = payload(
                await client.call_tool(
                    "tasks",
                    {
                        "action": "create",
                        "data": {
                            "title": "Renew the passport",
                            "due": "2026-12-15",
                            "project": "home",
                        },
                    },
                )
            )
            task_id = created["task"]["id"]
            assert created["hints"][0]["action"] == "get"
            assert created["context"]["overdue"] == 0
    assert database.exists()

    with served(database, port) as url:
        async with connected(url, mode) as client:
            found = payload(
                await client.call_tool(
                    "tasks", {"action": "get", "data": {"id": task_id}}
                )
            )
            assert found["task"]["title"] == "Renew the passport"
            assert found["task"]["project"] == "home"
            missing = await client.call_tool(
                "tasks", {"action": "get", "data": {"id": task_id + 1}}
            )
            assert missing.is_error is True
            read = await client.read_resource(f"task://{task_id}")
            [contents] = read.contents
            assert json.loads(contents.text)["title"] == "Renew the passport"
            plan = await client.get_prompt("plan", {"days": "3", "project": "home"})
            [message] = plan.messages
            assert "Renew the passport" in message.content.text


async def test_a_bad_call_is_refused_with_a_pointer_to_help(tmp_path: Path) -> None:
    with served(tmp_path / "tasks.sqlite3", free_port()) as url:
        async with connected(url, "auto") as client:
            refused = await client.call_tool(
                "tasks", {"action": "create", "data": {"title": "a", "due": "soon"}}
            )
            assert refused.is_error is True
            [block] = refused.content
            answer = json.loads(block.text)
            assert answer["error"] == "invalid_values"
            assert answer["help"].startswith("help")
