"""`wymcp stats URL`: the top refused (tool, action, gate) of a running server."""

from __future__ import annotations

import asyncio

import aiohttp

from ops_tools import Jobs
from wymcp.cli import main
from wymcp.transport.aiohttp import create_app

TOKEN = "t" * 40


async def _refuse_some(url: str) -> None:
    """Two invalid values, one unknown key, one unknown action, two good calls."""

    async def call(action: str, data: dict[str, object]) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "jobs",
                "arguments": {"action": action, "data": data},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        }
        headers = {
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": "jobs",
            "Accept": "application/json, text/event-stream",
        }
        async with (
            aiohttp.ClientSession() as http,
            http.post(url, json=body, headers=headers) as response,
        ):
            assert response.status == 200

    for action, data in [
        ("run", {"size": 99}),
        ("run", {"size": 0}),
        ("run", {"size": 1, "colour": "red"}),
        ("launch", {}),
        ("run", {"size": 1}),
        ("run", {"size": 2}),
    ]:
        await call(action, data)


async def test_stats_prints_the_most_refused_first(serve_app, capsys):
    url = await serve_app(create_app(TOOLS=[Jobs], METRICS=True, METRICS_TOKEN=TOKEN))
    await _refuse_some(url)
    metrics = url.removesuffix("/mcp") + "/metrics"
    status = await asyncio.to_thread(main, ["stats", metrics, "--token", TOKEN])
    printed = capsys.readouterr()
    assert status == 0, printed.err
    lines = printed.out.splitlines()
    assert lines[0] == "tools/call: 6, refused by a gate or middleware: 4"
    assert lines[2].split() == ["2", "40.0%", "jobs", "run", "invalid_values"]
    assert sorted(line.split()[-1] for line in lines[3:5]) == [
        "unknown_action",
        "unknown_params",
    ]
    assert len(lines) == 5


async def test_stats_says_why_it_cannot_read(serve_app, capsys):
    url = await serve_app(create_app(TOOLS=[Jobs], METRICS=True, METRICS_TOKEN=TOKEN))
    metrics = url.removesuffix("/mcp") + "/metrics"
    assert await asyncio.to_thread(main, ["stats", metrics]) == 1
    assert "401" in capsys.readouterr().err
    assert (
        await asyncio.to_thread(main, ["stats", url.removesuffix("/mcp") + "/nope"])
        == 1
    )
    assert "404" in capsys.readouterr().err
    assert await asyncio.to_thread(main, ["stats", "ftp://x"]) == 1
    assert "not an http" in capsys.readouterr().err


async def test_stats_top_cuts_the_table(serve_app, capsys):
    url = await serve_app(create_app(TOOLS=[Jobs], METRICS=True))
    await _refuse_some(url)
    metrics = url.removesuffix("/mcp") + "/metrics"
    assert await asyncio.to_thread(main, ["stats", metrics, "--top", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "... and 2 more rows (--top)"
