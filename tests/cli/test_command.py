"""The wymcp command: check prints every problem; serve runs and stops gracefully."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
import textwrap
from pathlib import Path

import aiohttp
import pytest

from wymcp.cli import main

TOOL = """
import asyncio
import os
from pathlib import Path
from wymcp.core.schema import Action, Tool

class Slow(Tool):
    name = "slow"
    description = "Answers after a pause."
    actions = {
        "wait": Action(
            description="Wait, then answer",
            properties={"seconds": {"type": "number", "minimum": 0}},
            required=["seconds"],
        )
    }

    async def run_action(self, action, data, ctx):
        Path(os.environ["CMD_STARTED"]).touch()
        await asyncio.sleep(data["seconds"])
        return {"waited": data["seconds"]}

class Broken(Tool):
    name = "broken"
    description = "Declares nothing."
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "cmdtools.py").write_text(TOOL, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("WYMCP_SETTINGS_MODULE", raising=False)
    return tmp_path


def settings(project: Path, name: str, source: str) -> str:
    (project / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return name


def test_check_passes_good_settings(project, capsys):
    name = settings(
        project, "cmd_good", 'TOOLS = ["cmdtools.Slow"]\nSTATE_SECRET = "k" * 32\n'
    )
    assert main(["check", "--settings", name]) == 0
    out = capsys.readouterr().out
    assert "0 error(s), 0 warning(s)" in out


def test_check_prints_warnings_but_passes(project, capsys):
    name = settings(project, "cmd_warn", 'TOOLS = ["cmdtools.Slow"]\nMY_THING = 1\n')
    assert main(["check", "--settings", name]) == 0
    out = capsys.readouterr().out
    assert "wymcp.W001" in out
    assert "wymcp.W002" in out


def test_check_names_the_setting_and_the_fix(project, capsys):
    name = settings(project, "cmd_bad", 'TOOLS = ["cmdtools.Nope"]\nBODY_LIMT = 1\n')
    assert main(["check", "--settings", name]) == 1
    captured = capsys.readouterr()
    assert "wymcp.E003" in captured.err
    assert "no attribute 'Nope'" in captured.err
    assert "Did you mean BODY_LIMIT?" in captured.err
    assert "Traceback" not in captured.err + captured.out


def test_check_reports_a_tool_that_cannot_be_served(project, capsys):
    name = settings(project, "cmd_broken", 'TOOLS = ["cmdtools.Broken"]\n')
    assert main(["check", "--settings", name]) == 1
    out = capsys.readouterr().out
    assert "wymcp.E006" in out
    assert "broken" in out


def test_check_a_jwt_resource_server(project, capsys):
    name = settings(
        project,
        "cmd_auth",
        """
        from wymcp.transport.aiohttp import JwtValidator
        TOOLS = ["cmdtools.Slow"]
        STATE_SECRET = "k" * 32
        AUTH = JwtValidator(
            issuer="https://auth.example.com",
            audience="https://mcp.example.com/mcp",
            jwks_url="https://auth.example.com/jwks.json",
        )
        AUTH_AUTHORIZATION_SERVERS = ["https://auth.example.com"]
        """,
    )
    assert main(["check", "--settings", name]) == 0
    out = capsys.readouterr().out
    assert "wymcp.W006" in out
    assert "0 error(s), 1 warning(s)" in out


def test_check_a_jwt_validator_built_wrong(project, capsys):
    name = settings(
        project,
        "cmd_auth_bad",
        """
        from wymcp.transport.aiohttp import JwtValidator
        AUTH = JwtValidator(issuer="https://auth.example.com", audience="x")
        """,
    )
    assert main(["check", "--settings", name]) == 1
    err = capsys.readouterr().err
    assert "wymcp.E005" in err
    assert "exactly one of key= or jwks_url=" in err
    assert "Traceback" not in err


def test_check_auth_without_an_authorization_server(project, capsys):
    name = settings(project, "cmd_auth_alone", "AUTH = lambda token: None\n")
    assert main(["check", "--settings", name]) == 1
    err = capsys.readouterr().err
    assert "wymcp.E007" in err
    assert "AUTH_AUTHORIZATION_SERVERS" in err


def test_check_without_a_module_says_both_ways_out(project, capsys):
    assert main(["check"]) == 1
    err = capsys.readouterr().err
    assert "--settings" in err
    assert "WYMCP_SETTINGS_MODULE" in err


def test_check_reads_the_environment_variable(project, capsys, monkeypatch):
    monkeypatch.setenv("WYMCP_SETTINGS_MODULE", "no_such_module_for_wymcp")
    assert main(["check"]) == 1
    assert "wymcp.E005" in capsys.readouterr().err


def test_serve_refuses_bad_settings_without_a_traceback(project, capsys):
    name = settings(project, "cmd_serve_bad", "PORT = 'eighty'\n")
    assert main(["serve", "--settings", name]) == 1
    err = capsys.readouterr().err
    assert "PORT must be an integer, not str" in err
    assert "Traceback" not in err


def test_serve_refuses_a_broken_tool(project, capsys):
    name = settings(project, "cmd_serve_broken", 'TOOLS = ["cmdtools.Broken"]\n')
    assert main(["serve", "--settings", name]) == 1
    assert "Traceback" not in capsys.readouterr().err


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def start_serve(
    project: Path, name: str, port: int, **env: str
) -> asyncio.subprocess.Process:
    """Start `wymcp serve --settings name --port port` with the project importable."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from wymcp.cli import main; raise SystemExit(main())",
        "serve",
        "--settings",
        name,
        "--port",
        str(port),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(project), *sys.path]),
            **env,
        },
    )


async def test_serve_prints_the_url_and_finishes_calls_in_flight_on_sigterm(project):
    name = settings(
        project,
        "cmd_serve",
        'TOOLS = ["cmdtools.Slow"]\nSTATE_SECRET = "k" * 32\nSHUTDOWN_GRACE = 30\n',
    )
    port = free_port()
    started = project / "started"
    process = await start_serve(project, name, port, CMD_STARTED=str(started))
    try:
        assert process.stdout is not None
        banner = [(await process.stdout.readline()).decode() for _ in range(4)]
        assert banner[0].strip() == f"wymcp serving http://127.0.0.1:{port}/mcp"
        assert "2026-07-28" in banner[1]
        assert banner[2].strip() == "tools: slow, help"
        url = f"http://127.0.0.1:{port}/mcp"
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "slow",
                "arguments": {"action": "wait", "data": {"seconds": 1}},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        }
        headers = {
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": "slow",
        }
        async with aiohttp.ClientSession() as http:
            for _ in range(200):
                try:
                    async with http.get(url) as probe:
                        await probe.read()
                    break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.05)
            call = asyncio.ensure_future(http.post(url, json=body, headers=headers))
            while not started.exists():  # noqa: ASYNC110 - another process writes it
                await asyncio.sleep(0.02)
            process.send_signal(signal.SIGTERM)
            response = await call
            assert response.status == 200
            answer = await response.json()
        assert json.dumps(answer["result"]).count("waited") >= 1
        assert await asyncio.wait_for(process.wait(), 60) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_serve_on_loopback_does_not_warn_about_state_secret(project):
    # one process on a loopback HOST: no other worker can be handed its state
    name = settings(project, "cmd_alone", "SERVER_NAME = 'alone'\n")
    process = await start_serve(project, name, free_port())
    try:
        assert process.stdout is not None
        banner = await asyncio.wait_for(process.stdout.readline(), 60)
        assert banner.startswith(b"wymcp serving")
        process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(process.communicate(), 60)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0
    assert b"wymcp.W005" in err  # TOOLS is empty: still told
    assert b"wymcp.W002" not in err


async def read_head(reader: asyncio.StreamReader) -> bytes:
    """The status line and headers of one response, or b"" when the server closed."""
    try:
        return await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    except asyncio.IncompleteReadError as exc:
        return exc.partial
    except ConnectionResetError:
        return b""


async def test_serve_applies_header_timeout_and_max_connections(project):
    name = settings(
        project,
        "cmd_limits",
        'STATE_SECRET = "k" * 32\nHEADER_TIMEOUT = 1\nMAX_CONNECTIONS = 1\n',
    )
    port = free_port()
    process = await start_serve(project, name, port)
    try:
        assert process.stdout is not None
        await process.stdout.readline()  # the banner: listening
        # a connection that never sends its request head is closed
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        await writer.drain()
        assert await read_head(reader) == b""
        writer.close()
        # while one connection is open, one more is answered 503
        held_reader, held = await asyncio.open_connection("127.0.0.1", port)
        held.write(b"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert b" 405 " in await read_head(held_reader)  # the server has it
        held.write(  # a request whose body is still coming keeps it busy
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 10\r\n\r\n"
        )
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        head = await read_head(reader)
        assert head.startswith(b"HTTP/1.1 503 ")
        assert b"Retry-After: 5" in head
        writer.close()
        held.close()
    finally:
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 60) == 0


def test_check_prints_the_published_size_per_tool_and_action(project, capsys):
    name = settings(
        project, "cmd_size", 'TOOLS = ["cmdtools.Slow"]\nSTATE_SECRET = "k" * 32\n'
    )
    assert main(["check", "--settings", name]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    total = next(line for line in lines if line.startswith("tools/list (2026-07-28)"))
    assert "budget 10,000 tokens" in total
    slow = next(line for line in lines if line.startswith("  slow: "))
    size = int(slow.split(": ")[1].split(" bytes")[0].replace(",", ""))
    assert f"(~{-(-size // 4):,} tokens)" in slow
    assert any(line.startswith("    slow.wait: ") for line in lines)
    assert any(line.startswith("  help: ") for line in lines)
    assert "wymcp.W017" not in out


def test_check_warns_when_tools_list_passes_its_budget(project, capsys):
    name = settings(
        project,
        "cmd_budget",
        'TOOLS = ["cmdtools.Slow"]\nSTATE_SECRET = "k" * 32\nTOOLS_LIST_BUDGET = 50\n',
    )
    assert main(["check", "--settings", name]) == 0
    out = capsys.readouterr().out
    assert "wymcp.W017 (warning): tools/list takes" in out
    assert "above TOOLS_LIST_BUDGET (50 tokens)" in out
    assert "0 error(s), 1 warning(s)" in out
