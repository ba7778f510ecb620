"""docs/tasks.md: its tools run as the page says, through an engine at 2026-07-28."""

from __future__ import annotations

import asyncio
import importlib
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from wymcp.core.server import (
    MODERN,
    TASKS_EXTENSION,
    Engine,
    Exchange,
    Headers,
    encode_json,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "tasks.md"
CAPS = {"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}}


@pytest.fixture
def guide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text("utf-8"), re.DOTALL)
    (tmp_path / "guide_tasks.py").write_text("\n\n".join(blocks), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("guide_tasks", None)
    return importlib.import_module("guide_tasks")


async def post(
    engine: Engine, method: str, params: dict[str, Any], caps: Any = None
) -> Any:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": CAPS if caps is None else caps,
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {**params, "_meta": meta},
    }
    headers = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)]
    name = params.get("name", params.get("taskId"))
    if isinstance(name, str):
        headers.append(("Mcp-Name", name))
    exchange = Exchange(method="POST", headers=Headers.of(headers), body=body)
    reply = await engine.post(exchange, _NoStream())
    return json.loads(encode_json(reply.body))  # as a transport writes it


class _NoStream:
    async def open(self, headers: Any = None) -> None:
        return None

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        return None


async def finished(engine: Engine, task_id: str) -> Any:
    for _ in range(200):
        got = (await post(engine, "tasks/get", {"taskId": task_id}))["result"]
        if got["status"] in ("completed", "failed", "cancelled", "input_required"):
            return got
        await asyncio.sleep(0.005)
    raise AssertionError("the task did not end")


async def test_the_required_action_runs_as_a_task(guide: ModuleType) -> None:
    engine = Engine(tools=[guide.Reports, guide.Exports, guide.Deploy])
    listed = (await post(engine, "tools/list", {}))["result"]["tools"]
    support = {t["name"]: t.get("execution") for t in listed}
    assert support["reports"] == {"taskSupport": "optional"}
    assert support["deploy"] == {"taskSupport": "required"}
    args = {"action": "build", "data": {"year": 2024}}
    created = (
        await post(engine, "tools/call", {"name": "reports", "arguments": args})
    )["result"]
    assert created["resultType"] == "task"
    done = await finished(engine, created["taskId"])
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == '{"year":2024,"pages":12}'
    latest = {"action": "latest", "data": {}}
    sync = await post(engine, "tools/call", {"name": "reports", "arguments": latest})
    assert sync["result"]["content"][0]["text"] == "Report 2025"
    refused = await post(
        engine, "tools/call", {"name": "reports", "arguments": args}, caps={}
    )
    assert refused["error"]["code"] == -32021


async def test_a_question_parks_the_export(guide: ModuleType) -> None:
    engine = Engine(tools=[guide.Exports])
    args = {"action": "everything", "data": {}}
    created = (
        await post(engine, "tools/call", {"name": "exports", "arguments": args})
    )["result"]
    parked = await finished(engine, created["taskId"])
    assert parked["status"] == "input_required"
    (key,) = parked["inputRequests"]
    answer = {key: {"action": "accept", "content": {"archived": True}}}
    await post(
        engine, "tasks/update", {"taskId": created["taskId"], "inputResponses": answer}
    )
    done = await finished(engine, created["taskId"])
    assert done["result"]["content"][0]["text"] == '{"rows":120}'


async def test_the_prelude_asks_then_becomes_a_task(guide: ModuleType) -> None:
    engine = Engine(tools=[guide.Deploy])
    first = (await post(engine, "tools/call", {"name": "deploy", "arguments": {}}))[
        "result"
    ]
    assert first["resultType"] == "input_required"
    responses = {"go": {"action": "accept", "content": {"go": True}}}
    second = (
        await post(
            engine,
            "tools/call",
            {"name": "deploy", "arguments": {}, "inputResponses": responses},
        )
    )["result"]
    assert second["resultType"] == "task"
    done = await finished(engine, second["taskId"])
    assert done["result"]["content"][0]["text"] == "Deployed."
