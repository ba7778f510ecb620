"""`wymcp serve` with LOG_FORMAT = "text": a request value cannot forge a log line.

A tool that raises with a request value in its message (a common pattern) put
a whole forged access line in the log (issue 27); the text formatter escapes
control characters in every record and in each exception's message.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import re
import signal
import socket
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from ops_tools import Raiser
from wymcp.core.server import TextLogFormatter
from wymcp.core.server._log_text import TEXT_LIMIT
from wymcp.testing import Client
from wymcp.transport.aiohttp import create_app
from wymcp.transport.aiohttp._access_log import JsonLogFormatter

TESTS = Path(__file__).resolve().parents[1]
FORGED = (
    "\n2026-12-05 03:00:00,000 INFO wymcp.access: request_id=FORGED "
    "tool=admin action=delete_all outcome=ok status=200\r\x1b[2K\u2028"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _call_raiser(base: str, text: str) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "raiser",
            "arguments": {"action": "say", "data": {"text": text}},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "raiser",
    }
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{base}/mcp", json=body, headers=headers) as response,
    ):
        assert response.status == 200


async def test_a_tool_raising_a_request_value_cannot_forge_a_line(tmp_path: Path):
    (tmp_path / "text_log_settings.py").write_text(
        'TOOLS = ["ops_tools.Raiser"]\nACCESS_LOG = True\n', encoding="utf-8"
    )
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from wymcp.cli import main; raise SystemExit(main())",
        "serve",
        "--settings",
        "text_log_settings",
        "--port",
        str(port),
        stderr=asyncio.subprocess.PIPE,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(tmp_path), str(TESTS), *sys.path]),
        },
    )
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(400):
                try:
                    async with http.get(f"{base}/healthz") as probe:
                        assert probe.status == 200
                    break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.05)
        await _call_raiser(base, FORGED)
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 60) == 0
        assert process.stderr is not None
        logged = (await process.stderr.read()).decode()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    lines = logged.split("\n")
    assert not [line for line in lines if line.startswith("2026-12-05 03:00:00")]
    assert not {"\r", "\x1b", "\u2028"} & set(logged)
    access = [
        line
        for line in lines
        if re.match(r"\d{4}-\d\d-\d\d \S+ INFO wymcp\.access: ", line)
    ]
    assert len(access) == 1
    assert "tool=raiser" in access[0]
    assert "outcome=tool_raised" in access[0]
    # the traceback is there, indented, its message escaped on one line
    assert "    Traceback (most recent call last):" in lines
    assert any(
        line.startswith("    ValueError: bad value \\n2026-12-05 03:00:00,000")
        and line.endswith("status=200\\r\\x1b[2K\\u2028")
        for line in lines
    )


def _raise_key() -> None:
    raise KeyError("first\nINFO forged")


def _raise_chained() -> None:
    try:
        _raise_key()
    except KeyError as inner:
        raise RuntimeError("second\x1b]0;title\x07") from inner


def test_chained_exceptions_and_messages_are_escaped():
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(TextLogFormatter())
    logger = logging.getLogger("wymcp.test_text_logs")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        try:
            _raise_chained()
        except RuntimeError:
            logger.exception("failed for %s", "user\ninput")
    finally:
        logger.removeHandler(handler)
    lines = out.getvalue().rstrip("\n").split("\n")
    assert lines[0].endswith("ERROR wymcp.test_text_logs: failed for user\\ninput")
    assert all(line.startswith("    ") or not line for line in lines[1:])
    assert "    KeyError: 'first\\nINFO forged'" in lines
    assert "    RuntimeError: second\\x1b]0;title\\x07" in lines
    assert (
        "    The above exception was the direct cause of the following exception:"
        in lines
    )


def _raise_group(members: list[Exception]) -> None:
    raise ExceptionGroup("unhandled errors in a TaskGroup", members)


def test_an_exception_groups_members_are_written_escaped_and_bounded():
    """A tool failing inside a TaskGroup: each member's cause is in the log."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(TextLogFormatter())
    logger = logging.getLogger("wymcp.test_text_logs.group")
    logger.addHandler(handler)
    logger.propagate = False
    members = [ValueError("bad\nINFO forged"), KeyError("k")] + [
        OSError(n) for n in range(40)
    ]
    try:
        try:
            _raise_group(members)
        except ExceptionGroup:
            logger.exception("call failed")
    finally:
        logger.removeHandler(handler)
    lines = out.getvalue().rstrip("\n").split("\n")
    assert all(line.startswith("    ") or not line for line in lines[1:])
    text = "\n".join(lines)
    assert "ValueError: bad\\nINFO forged" in text
    assert "KeyError: 'k'" in text
    # the group and its members share the limit of 16 exceptions
    assert text.count("OSError") < 16
    assert "more, not written" in text


def _format_raised(formatter: logging.Formatter, message: str) -> str:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter)
    logger = logging.getLogger("wymcp.test_text_logs.bounded")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        try:
            raise ValueError(f"bad value {message}")  # noqa: TRY301 - a tool's raise
        except ValueError:
            logger.exception("failed for %s", message)
    finally:
        logger.removeHandler(handler)
    return out.getvalue()


@pytest.mark.parametrize("char", ["\x7f", "\x1b", "\U000e0001", "a"])
@pytest.mark.parametrize("form", ["text", "json"])
def test_one_record_is_bounded_whatever_the_message(char: str, form: str):
    # a 1 MiB message wrote 4 MiB of text log (6 MiB as JSON); doubling it
    # doubled the record (issue 27, attack 6): now each is cut at 8 KiB
    def formatter() -> logging.Formatter:
        return TextLogFormatter() if form == "text" else JsonLogFormatter()

    sizes = [
        len(_format_raised(formatter(), char * size)) for size in (1 << 20, 2 << 20)
    ]
    assert abs(sizes[0] - sizes[1]) <= 16  # the lengths in the markers
    assert sizes[0] < 128 * 1024
    record = _format_raised(formatter(), char * (1 << 20))
    if form == "json":
        assert len(record.rstrip("\n").split("\n")) == 1
        document = json.loads(record)
        assert document["level"] == "ERROR"
        record = document["message"] + "\n" + document["exception"]
    else:
        lines = record.rstrip("\n").split("\n")
        assert all(line.startswith("    ") or not line for line in lines[1:])
        assert all(len(line) < TEXT_LIMIT + 100 for line in lines)
    # the message line and the exception's, each cut with its length
    cut = re.findall(r"…\[cut: (\d+) characters in all\]", record)
    assert len(cut) == 2
    assert all(int(n) > 1 << 20 for n in cut)


async def _raise_big(client: Client, text: str) -> int:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "raiser",
            "arguments": {"action": "say", "data": {"text": text}},
        },
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
        "Mcp-Session-Id": client.session_id or "",
    }
    body = io.BytesIO(json.dumps(message, ensure_ascii=False).encode())
    async with client.http.post("/mcp", data=body, headers=headers) as response:
        assert "tool_raised" in await response.text()
        return response.status


async def test_a_huge_raised_message_holds_no_other_client(loop_watchdog: object):
    # 3 MiB of DEL in a raising tool's message held a valid client 0.7-1.8 s
    # while the text formatter escaped it one character at a time (attack 6)
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(TextLogFormatter())
    logger = logging.getLogger("wymcp.core.server")
    logger.addHandler(handler)
    app = create_app(TOOLS=[Raiser])
    worst = 0.0
    try:
        async with (
            Client(app, protocol_version="2025-11-25") as hostile,
            Client(app, protocol_version="2025-11-25") as valid,
        ):
            stop = asyncio.Event()

            async def ping() -> None:
                nonlocal worst
                while not stop.is_set():
                    began = time.perf_counter()
                    assert "raiser" in [t["name"] for t in await valid.list_tools()]
                    worst = max(worst, time.perf_counter() - began)
                    await asyncio.sleep(0.01)

            pinger = asyncio.create_task(ping())
            await asyncio.sleep(0.05)
            try:
                for _ in range(2):
                    assert await _raise_big(hostile, "\x7f" * (3 << 20)) == 200
            finally:
                stop.set()
                await pinger
    finally:
        logger.removeHandler(handler)
    assert worst < 2.0
    logged = out.getvalue()
    assert logged.count("characters in all]") == 2
    assert len(logged) < 2 * 64 * 1024
