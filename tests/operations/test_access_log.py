"""ACCESS_LOG and LOG_FORMAT: one bounded, escaped line per request; JSON per line."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest

from ops_tools import Jobs
from wymcp.core.server import Principal
from wymcp.testing import Client
from wymcp.transport.aiohttp import create_app
from wymcp.transport.aiohttp._access_log import JsonLogFormatter, escape

HOSTILE = "evil\r\nINFO forged line\x1b[31mred\x1b[0m\u2028\x00"
SESSION = "2025-11-25"


async def _raw_call(client: Client, rid: Any, name: str) -> int:
    message = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": name, "arguments": {"action": name}},
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": SESSION,
        "Mcp-Session-Id": client.session_id or "",
        "X-Request-Id": 'req" outcome=ok',
    }
    body = io.BytesIO(json.dumps(message).encode())
    async with client.http.post("/mcp", data=body, headers=headers) as response:
        return response.status


def _access(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "wymcp.access"]


async def test_hostile_names_and_ids_cannot_break_or_forge_a_line(
    caplog: pytest.LogCaptureFixture,
):
    caplog.set_level(logging.INFO, logger="wymcp.access")
    app = create_app(TOOLS=[Jobs], ACCESS_LOG=True)
    async with Client(app, protocol_version=SESSION) as client:
        assert await _raw_call(client, HOSTILE, HOSTILE) == 200
        await client.call("jobs", "run", {"size": 1})
    lines = _access(caplog)
    hostile = next(r for r in lines if "evil" in r.getMessage())
    text = hostile.getMessage()
    for raw in ("\r", "\n", "\x1b", "\u2028", "\x00"):
        assert raw not in text
    assert '"evil\\r\\nINFO forged line\\x1b[31mred' in text
    assert 'rpc_id="evil\\r\\n' in text
    assert "outcome=unknown_tool" in text
    # a space or `=` quotes the value: no field can be forged
    assert 'request_id="req\\" outcome=ok"' in text
    assert text.count("outcome=") == 2  # the quoted forgery, and the real one
    json_line = JsonLogFormatter().format(hostile)
    assert "\n" not in json_line
    assert "\x1b" not in json_line
    document = json.loads(json_line)
    assert document["tool"].startswith("evil\\r\\nINFO")
    assert document["status"] == 200
    assert document["method"] == "tools/call"
    # the ordinary call: every field of the line
    ok = json.loads(JsonLogFormatter().format(lines[-2]))
    assert ok["tool"] == "jobs"
    assert ok["action"] == "run"
    assert ok["revision"] == SESSION
    assert ok["outcome"] == "ok"
    assert ok["session"] == client.session_id or ok["session"]
    assert isinstance(ok["duration_ms"], float)


async def test_a_line_stays_bounded_whatever_the_name(
    caplog: pytest.LogCaptureFixture, loop_watchdog: object
):
    caplog.set_level(logging.INFO, logger="wymcp.access")
    app = create_app(TOOLS=[Jobs], ACCESS_LOG=True)
    lengths = []
    async with Client(app, protocol_version=SESSION) as client:
        for size in (100_000, 200_000):
            await _raw_call(client, size, "\x1b" * size)
            line = _access(caplog)[-1].getMessage()
            assert "outcome=unknown_tool" in line
            lengths.append(len(line))
    # doubling the input does not grow the line; each value is cut at 120
    # characters before escaping (at most 10 characters each once escaped)
    # (the id and the duration may take a digit more or less)
    assert abs(lengths[0] - lengths[1]) <= 4
    assert 120 * 4 < lengths[0] < 4096  # the tool: 120 ESC, each as \\x1b


def test_the_subject_is_logged_never_the_token():
    from wymcp.core.server import CallRecord
    from wymcp.transport.aiohttp._access_log import access_fields

    record = CallRecord(method="ping", principal=Principal(subject="alice\n"))
    fields = access_fields(
        record, request_id="1", http_method="POST", status=200, seconds=0.001
    )
    assert fields["subject"] == "alice\\n"
    assert "token" not in json.dumps(fields)


def test_escape_is_the_identity_on_plain_text_and_cuts_long_values():
    assert escape("tasks") == "tasks"
    assert escape("a" * 500) == "a" * 120 + "…"
    assert escape('say "hi"\\') == 'say \\"hi\\"\\\\'


async def test_without_access_log_nothing_is_logged(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO, logger="wymcp.access")
    app = create_app(TOOLS=[Jobs])
    async with Client(app) as client:
        await client.call("jobs", "run", {"size": 1})
    assert _access(caplog) == []


async def test_a_refusal_before_the_engine_is_logged_as_refused(
    caplog: pytest.LogCaptureFixture,
):
    caplog.set_level(logging.INFO, logger="wymcp.access")
    app = create_app(TOOLS=[Jobs], ACCESS_LOG=True)
    async with (
        Client(app) as client,
        client.http.post(
            "/mcp", data=b"{}", headers={"Content-Type": "text/plain"}
        ) as response,
    ):
        assert response.status == 415
    (line,) = [r.getMessage() for r in _access(caplog)]
    assert "outcome=refused status=415" in line


class _TagEverything:
    """Tags the call with 8 values taken from the request, as a careless audit does."""

    async def __call__(self, call: Any, call_next: Any) -> Any:
        for n in range(8):
            call.tags[f"tag{n}_" + "k" * 40] = "\x1b" * 500 + str(call.tool)
        return await call_next()


@pytest.mark.parametrize("form", ["text", "json"])
async def test_middleware_tags_stay_within_their_budget(
    caplog: pytest.LogCaptureFixture, form: str
):
    caplog.set_level(logging.INFO, logger="wymcp.access")
    app = create_app(TOOLS=[Jobs], ACCESS_LOG=True, MIDDLEWARE=[_TagEverything()])
    async with Client(app, protocol_version=SESSION) as client:
        await _raw_call(client, 7, "\x1b" * 500)
    (record,) = [r for r in _access(caplog) if "tools/call" in r.getMessage()]
    line = record.getMessage() if form == "text" else JsonLogFormatter().format(record)
    tags = record.access["tags"]  # type: ignore[attr-defined]
    assert sum(len(k) + len(v) for k, v in tags.items()) < 512 + 20
    assert tags["…"] == f"{8 - (len(tags) - 1)} more"
    assert len(line.encode()) < 4096
