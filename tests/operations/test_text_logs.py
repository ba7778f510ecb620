"""`wymcp serve` with LOG_FORMAT = "text": a request value cannot forge a log line.

A tool that raises with a request value in its message (a common pattern) put
a whole forged access line in the log (issue 27); the text formatter escapes
control characters in every record and in each exception's message.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import re
import signal
import socket
import sys
from pathlib import Path

import aiohttp

from wymcp.core.server import TextLogFormatter

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
