"""examples/bookmarks.py, the README's one-file server: a tool and its settings in
one module, served by `wymcp serve --settings bookmarks` and `wymcp stdio`, driven
by the official MCP Python SDK client over HTTP and over stdio.
"""

from __future__ import annotations

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
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
WYMCP = str(Path(sys.executable).with_name("wymcp"))
START_DEADLINE_SECONDS = 60.0
"""How long the server may take to come up on a busy machine (readiness, not speed)."""
REVISIONS = [("auto", "2026-07-28"), ("legacy", "2025-11-25")]


def _environment() -> dict[str, str]:
    environment = dict(os.environ)
    environment.pop("WYMCP_SETTINGS_MODULE", None)
    environment.pop("PYTHONPATH", None)
    return environment


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@contextmanager
def _served(tmp_path: Path) -> Iterator[str]:
    """`wymcp serve --settings bookmarks` in examples/, as the file's comment says."""
    port = _free_port()
    log_path = tmp_path / "serve.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(  # noqa: S603 - our console script, fixed arguments
            [WYMCP, "serve", "--settings", "bookmarks", "--port", str(port)],
            cwd=EXAMPLES,
            env=_environment(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + START_DEADLINE_SECONDS
            while not _accepts(port):
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    process.wait()
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


def _payload(result: Any) -> Any:
    [block] = result.content
    return json.loads(block.text)


async def _exercise(client: Client) -> None:
    """What the README promises of the file, through a real client."""
    names = [tool.name for tool in (await client.list_tools()).tools]
    assert names == ["bookmarks", "help"]
    added = await client.call_tool(
        "bookmarks",
        {
            "action": "add",
            "data": {"title": "MCP", "url": "https://modelcontextprotocol.io"},
        },
    )
    assert added.is_error is False
    assert _payload(added) == {
        "title": "MCP",
        "url": "https://modelcontextprotocol.io",
        "tags": None,
    }
    found = await client.call_tool("bookmarks", {"action": "find", "data": {}})
    assert [b["title"] for b in _payload(found)["items"]] == ["MCP"]
    refused = await client.call_tool(
        "bookmarks", {"action": "add", "data": {"titel": "X", "url": "https://x.io"}}
    )
    assert refused.is_error is True
    refusal = _payload(refused)
    assert refusal["error"] == "unknown_params"
    assert refusal["unknown"] == ["data.titel"]
    assert refusal["missing"] == ["title"]
    assert refusal["did_you_mean"] == {"data.titel": "data.title"}
    again = await client.call_tool(
        "bookmarks",
        {
            "action": "add",
            "data": {"title": "Y", "url": "https://modelcontextprotocol.io"},
        },
    )
    assert again.is_error is True
    assert "is saved already" in again.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize(("mode", "revision"), REVISIONS)
async def test_the_sdk_client_uses_the_one_file_server_over_http(
    tmp_path: Path, mode: str, revision: str
) -> None:
    with _served(tmp_path) as url:
        async with Client(url, mode=mode) as client:  # type: ignore[arg-type]
            assert client.protocol_version == revision
            await _exercise(client)


@asynccontextmanager
async def _stdio(mode: str) -> AsyncIterator[Client]:
    server = StdioServerParameters(
        command=WYMCP,
        args=["stdio", "--settings", "bookmarks"],
        env=_environment(),
        cwd=str(EXAMPLES),
    )
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        yield client


@pytest.mark.parametrize(("mode", "revision"), REVISIONS)
async def test_the_sdk_client_uses_the_one_file_server_over_stdio(
    mode: str, revision: str
) -> None:
    async with _stdio(mode) as client:
        assert client.protocol_version == revision
        await _exercise(client)


def test_tools_may_name_a_class_of_the_settings_module_itself(tmp_path: Path) -> None:
    source = (EXAMPLES / "bookmarks.py").read_text(encoding="utf-8")
    dotted = source.replace("TOOLS = [Bookmarks]", 'TOOLS = ["dotted.Bookmarks"]')
    assert dotted != source
    (tmp_path / "dotted.py").write_text(dotted, encoding="utf-8")
    checked = subprocess.run(  # noqa: S603 - our console script, fixed arguments
        [WYMCP, "check", "--settings", "dotted"],
        cwd=tmp_path,
        env=_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 error(s)" in checked.stdout
    listed = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "from wymcp.conf import load_settings;"
                "print([t.name for t in load_settings('dotted').TOOLS])"
            ),
        ],
        cwd=tmp_path,
        env={**_environment(), "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert listed.stdout.strip() == "['bookmarks']", listed.stderr
