"""METRICS under two gunicorn workers: one scrape reports the whole server.

With PROMETHEUS_MULTIPROC_DIR set, each worker writes its series to files in
that directory and the scraped worker sums them (prometheus_client's
multiprocess mode), whichever worker the kernel hands the scrape to.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import aiohttp
from prometheus_client.mmap_dict import MmapedDict
from prometheus_client.parser import text_string_to_metric_families

from gunicorn_process import AIOHTTP_WORKER, free_port, start_gunicorn

MODERN = "2026-07-28"
TESTS = Path(__file__).resolve().parents[1]
CALLS = 60
MOST_CALLS = 5000


def _call(rid: int) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {
            "name": "jobs",
            "arguments": {"action": "run", "data": {"size": 1}},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }


HEADERS = {
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "jobs",
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
}


def _ok_calls(text: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "wymcp_tool_calls_total" and sample.labels == {
                "tool": "jobs",
                "action": "run",
                "outcome": "ok",
            }:
                return sample.value
    return 0.0


def _calls_per_worker(directory: Path) -> dict[str, float]:
    """The tools/call each worker counted, by its file (one per process id)."""
    counted = {}
    for path in directory.glob("counter_*.db"):
        values = MmapedDict.read_all_values_from_file(str(path))
        total = sum(
            entry[1]
            for entry in values
            if json.loads(entry[0])[0] == "wymcp_tool_calls"
        )
        if total:
            counted[path.name] = total
    return counted


async def test_two_workers_one_scrape_counts_every_call(tmp_path: Path):
    multiproc = tmp_path / "prom"
    multiproc.mkdir()
    (tmp_path / "metrics_workers_settings.py").write_text(
        'TOOLS = ["ops_tools.Jobs"]\nSTATE_SECRET = "s" * 32\nMETRICS = True\n',
        encoding="utf-8",
    )
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(TESTS), *sys.path]),
        "WYMCP_SETTINGS_MODULE": "metrics_workers_settings",
        "PROMETHEUS_MULTIPROC_DIR": str(multiproc),
    }
    process = await start_gunicorn(
        port,
        worker=AIOHTTP_WORKER,
        workers=2,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        # a new connection per request, so the kernel spreads them over both
        connector = lambda: aiohttp.TCPConnector(force_close=True)  # noqa: E731 - a factory passed as an argument
        async with aiohttp.ClientSession(connector=connector()) as http:
            for _ in range(400):
                try:
                    async with http.get(f"{base}/readyz") as response:
                        if response.status == 200:
                            break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.05)
            # calls until both workers have served some (the kernel picks)
            sent = 0
            while sent < CALLS or len(_calls_per_worker(multiproc)) < 2:
                async with http.post(
                    f"{base}/mcp", data=json.dumps(_call(sent)), headers=HEADERS
                ) as response:
                    assert response.status == 200
                sent += 1
                assert sent < MOST_CALLS, "one worker took every connection"
            # each worker adds its counts to its file every LAG_INTERVAL
            for _ in range(200):
                if sum(_calls_per_worker(multiproc).values()) == sent:
                    break
                await asyncio.sleep(0.05)
            scraped = []
            for _ in range(6):
                async with http.get(f"{base}/metrics") as response:
                    scraped.append(_ok_calls(await response.text()))
        # both workers served calls: each counted its own in its own file
        per_worker = _calls_per_worker(multiproc)
        assert len(per_worker) == 2
        assert sum(per_worker.values()) == sent
        # every scrape, whichever worker answered it, counted all the calls
        assert scraped == [sent] * 6
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 60)
    assert process.returncode == 0
