"""The tasks extension (SEP-2663) at 2026-07-28: creation, each status change,
questions inside a task, cancellation, TTL expiry, caps and per-principal
isolation, driven through the engine.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, ClassVar

import pytest

from schema_oracle import MODERN
from wymcp.core.schema import Tool, ToolError
from wymcp.core.server import (
    TASKS_EXTENSION,
    Engine,
    EngineOptions,
    Exchange,
    Headers,
    InputRequest,
    Reply,
    TaskFailedError,
    encode_json,
)

from .conftest import FakeStream, modern_request, validate

CONFIRM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}},
    "required": ["confirm"],
}
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


class Gate:
    """Holds a tool until the test lets it go; records how it ended."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.ended: list[str] = []


GATE: dict[str, Gate] = {}


class Sync(Tool):
    name = "sync"
    description = "Answers at once; never a task."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return "sync answer"


class Held(Tool):
    name = "held"
    description = "Waits for the test's gate, then answers."
    task_support = "optional"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        gate = GATE["held"]
        try:
            await gate.release.wait()
        except asyncio.CancelledError:
            gate.ended.append("cancelled")
            raise
        gate.ended.append("finished")
        return {"n": arguments.get("n", 0)}


class Quick(Tool):
    name = "quick"
    description = "Answers at once, as a task when it can."
    task_support = "required"

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return "done"


class Failing(Tool):
    name = "failing"
    description = "A tool error (isError) or a protocol error, by argument."
    task_support = "optional"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"protocol": {"type": "boolean"}},
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        if arguments.get("protocol"):
            raise TaskFailedError(-32603, "broken")
        raise ToolError("the job failed")


class Asking(Tool):
    name = "asking"
    description = "Asks two things at once, then one more."
    task_support = "optional"

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        gate = GATE.get("asking")
        try:
            first = await ctx.ask(
                {
                    "a": InputRequest.elicitation("A?", CONFIRM),
                    "b": InputRequest.elicitation("B?", CONFIRM),
                }
            )
            again = await ctx.elicit("Sure?", CONFIRM, key="a")
        except asyncio.CancelledError:
            if gate is not None:
                gate.ended.append("cancelled")
            raise
        return [first["a"]["content"], first["b"]["content"], again["content"]]


class Prelude(Tool):
    name = "prelude"
    description = "Asks in the request (MRTR), then goes on as a task."
    task_support = "required"
    task_prelude = True

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        answer = await ctx.elicit("Name?", CONFIRM, key="user_name")
        started = await ctx.start_task()
        return f"started={started} answer={answer['content']}"


class Multi(Tool):
    name = "multi"
    description = "One action runs as a task, the other never."
    from wymcp.core.schema import Action

    actions: ClassVar[dict[str, Action]] = {
        "export": Action(description="Export", properties={}, task_support="required"),
        "peek": Action(description="Peek", properties={}),
    }
    task_support = "forbidden"

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        return action


class Progressing(Tool):
    name = "progressing"
    description = "Reports progress, then waits for the gate."
    task_support = "required"

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        await ctx.report_progress(3, 10, "x" * 1000)
        await ctx.report_progress(4, 10, "Exporting rows")
        await GATE["held"].release.wait()
        return "done"


TASKS = {"extensions": {TASKS_EXTENSION: {}}}
ASKING = {"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}}


async def settle() -> None:
    """Let background work run until it waits on something."""
    for _ in range(20):
        await asyncio.sleep(0)


class Client:
    """Posts 2026-07-28 requests to an engine and checks the envelope."""

    def __init__(
        self, engine: Engine, principal: object | None = None, peer: str | None = None
    ) -> None:
        self.engine = engine
        self.principal = principal
        self.peer = peer
        self.rid = 0

    async def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        caps: dict[str, Any] | None = None,
        name_header: str | None = None,
        principal: object = "default",
    ) -> Reply:
        self.rid += 1
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": TASKS
            if caps is None
            else caps,
        }
        body, headers = modern_request(method, params, self.rid, meta=meta)
        task_id = (params or {}).get("taskId")
        if name_header is not None:
            headers.append(("Mcp-Name", name_header))
        elif method.startswith("tasks/") and isinstance(task_id, str):
            headers.append(("Mcp-Name", task_id))
        exchange = Exchange(
            method="POST",
            headers=Headers.of(headers),
            body=body,
            principal=self.principal if principal == "default" else principal,
            peer=self.peer,
        )
        reply = await self.engine.post(exchange, FakeStream())
        assert reply.body is not None
        # as a transport writes it: a kept result is JSON text, copied as it is
        reply.body = json.loads(encode_json(reply.body))
        if "error" in reply.body:
            validate(MODERN, "JSONRPCErrorResponse", reply.body)
        else:
            validate(MODERN, "JSONRPCResultResponse", reply.body)
        return reply

    async def result(self, method: str, params: dict[str, Any], **kw: Any) -> Any:
        reply = await self.send(method, params, **kw)
        assert "result" in reply.body, reply.body
        return reply.body["result"]

    async def create(self, name: str, arguments: Any = None, **kw: Any) -> str:
        params = {"name": name, "arguments": arguments or {}}
        created = await self.result("tools/call", params, **kw)
        assert created["resultType"] == "task", created
        return str(created["taskId"])

    async def get(self, task_id: str, **kw: Any) -> Any:
        return await self.result("tasks/get", {"taskId": task_id}, **kw)

    async def error(self, method: str, params: dict[str, Any], **kw: Any) -> Any:
        reply = await self.send(method, params, **kw)
        assert "error" in reply.body, reply.body
        return reply.status, reply.body["error"]


def engine(**options: Any) -> Engine:
    return Engine(
        tools=[Sync, Held, Quick, Failing, Asking, Prelude, Multi, Progressing],
        options=EngineOptions(**options),
    )


@pytest.fixture(autouse=True)
def gates():
    GATE.clear()
    GATE["held"] = Gate()
    GATE["asking"] = Gate()
    yield
    GATE.clear()


@pytest.fixture
def client():
    return Client(engine())


async def test_the_extension_is_advertised_at_2026_only(client):
    found = await client.result("server/discover", {})
    assert found["capabilities"]["extensions"] == {TASKS_EXTENSION: {}}
    assert "tasks" not in found["capabilities"]
    assert "extensions" not in client.engine.capabilities("2025-11-25")


async def test_tools_list_publishes_task_support(client):
    listed = await client.result("tools/list", {})
    support = {
        t["name"]: t.get("execution", {}).get("taskSupport") for t in listed["tools"]
    }
    assert support["sync"] is None
    assert support["held"] == "optional"
    assert support["quick"] == "required"
    assert support["multi"] == "optional"


async def test_a_created_task_is_flat_and_completes_with_its_result(client):
    GATE["held"].release.set()
    created = await client.result("tools/call", {"name": "held", "arguments": {"n": 7}})
    assert created["resultType"] == "task"
    assert created["status"] == "working"
    for field in ("createdAt", "lastUpdatedAt"):
        assert ISO.fullmatch(created[field])
    assert created["ttlMs"] == 3_600_000
    assert created["pollIntervalMs"] == 1000
    for absent in ("task", "result", "error", "inputRequests", "requestState"):
        assert absent not in created
    await settle()
    done = await client.get(created["taskId"])
    assert done["status"] == "completed"
    assert done["resultType"] == "complete"
    assert done["result"]["content"] == [{"type": "text", "text": '{"n":7}'}]
    assert done["result"]["isError"] is False
    assert "requestState" not in done
    assert GATE["held"].ended == ["finished"]


async def test_working_then_completed(client):
    task_id = await client.create("held")
    working = await client.get(task_id)
    assert working["status"] == "working"
    assert "result" not in working
    assert "error" not in working
    GATE["held"].release.set()
    await settle()
    assert (await client.get(task_id))["status"] == "completed"


async def test_a_tool_error_completes_with_is_error(client):
    task_id = await client.create("failing")
    await settle()
    done = await client.get(task_id)
    assert done["status"] == "completed"
    assert done["result"]["isError"] is True


async def test_a_protocol_error_fails_with_the_error_and_no_result(client):
    task_id = await client.create("failing", {"protocol": True})
    await settle()
    failed = await client.get(task_id)
    assert failed["status"] == "failed"
    assert failed["error"] == {"code": -32603, "message": "broken"}
    assert "result" not in failed


async def test_a_protocol_error_outside_a_task_is_the_json_rpc_error(client):
    _status, error = await client.error(
        "tools/call",
        {"name": "failing", "arguments": {"protocol": True}},
        caps={},
    )
    assert error["code"] == -32603
    assert error["message"] == "broken"


async def test_a_sync_tool_never_becomes_a_task(client):
    result = await client.result(
        "tools/call",
        {"name": "sync", "arguments": {}, "task": {"ttl": 60000}},
    )
    assert result["resultType"] == "complete"
    assert "taskId" not in result


async def test_without_the_extension_an_optional_tool_runs_in_the_request(client):
    GATE["held"].release.set()
    result = await client.result("tools/call", {"name": "held"}, caps={})
    assert result["resultType"] == "complete"
    assert "taskId" not in result


async def test_a_required_tool_without_the_extension_is_32021(client):
    status, error = await client.error("tools/call", {"name": "quick"}, caps={})
    assert status == 400
    assert error["code"] == -32021
    assert error["data"] == {
        "requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}
    }


async def test_task_support_is_per_action(client):
    task_id = await client.create("multi", {"action": "export", "data": {}})
    await settle()
    assert (await client.get(task_id))["result"]["content"][0]["text"] == "export"
    peek = await client.result(
        "tools/call", {"name": "multi", "arguments": {"action": "peek", "data": {}}}
    )
    assert peek["resultType"] == "complete"
    _status, error = await client.error(
        "tools/call",
        {"name": "multi", "arguments": {"action": "export", "data": {}}},
        caps={},
    )
    assert error["code"] == -32021


async def test_a_refused_call_is_answered_at_once_not_as_a_task(client):
    result = await client.result(
        "tools/call", {"name": "held", "arguments": {"n": "seven"}}
    )
    assert result["resultType"] == "complete"
    assert result["isError"] is True
    assert client.engine._tasks.running == {}


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
async def test_the_methods_need_the_extension(client, method):
    status, error = await client.error(
        method, {"taskId": "gate-test", "inputResponses": {}}, caps={}
    )
    assert (status, error["code"]) == (400, -32021)


@pytest.mark.parametrize("task_id", ["nope", "x" * 5000])
async def test_an_unknown_task_is_32602_without_echo(client, task_id):
    status, error = await client.error("tasks/get", {"taskId": task_id})
    assert (status, error["code"]) == (400, -32602)
    assert "xxxxxxxxxx" not in str(error)


async def test_a_missing_task_id_is_32602(client):
    _status, error = await client.error("tasks/get", {})
    assert error["code"] == -32602


@pytest.mark.parametrize("method", ["tasks/result", "tasks/list"])
async def test_the_removed_v1_methods_are_not_found(client, method):
    status, error = await client.error(method, {"taskId": "x"})
    assert (status, error["code"]) == (404, -32601)


async def test_mcp_name_must_mirror_the_task_id(client):
    task_id = await client.create("held")
    status, error = await client.error(
        "tasks/get", {"taskId": task_id}, name_header="another-task"
    )
    assert (status, error["code"]) == (400, -32020)


async def test_questions_park_the_task_until_every_answer_is_in():
    client = Client(engine())
    task_id = await client.create("asking", caps=ASKING)
    await settle()
    parked = await client.get(task_id)
    assert parked["status"] == "input_required"
    keys = sorted(parked["inputRequests"])
    assert len(keys) == 2
    assert all(
        r["method"] == "elicitation/create" for r in parked["inputRequests"].values()
    )
    first, second = keys
    ack = await client.result(
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {
                first: {"action": "accept", "content": {"confirm": True}},
                "never-asked": {"action": "accept"},
            },
        },
    )
    assert ack == {"resultType": "complete", "_meta": ack["_meta"]}
    await settle()
    partial = await client.get(task_id)
    assert partial["status"] == "input_required"
    assert list(partial["inputRequests"]) == [second]
    await client.result(
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {
                second: {"action": "accept", "content": {"confirm": False}}
            },
        },
    )
    await settle()
    again = await client.get(task_id)
    assert again["status"] == "input_required"
    (third,) = again["inputRequests"]
    assert third not in keys
    await client.result(
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {
                third: {"action": "accept", "content": {"confirm": True}}
            },
        },
    )
    await settle()
    done = await client.get(task_id)
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == (
        '[{"confirm":true},{"confirm":false},{"confirm":true}]'
    )


async def test_an_answer_to_a_closed_question_is_ignored(client):
    task_id = await client.create("held")
    await client.result(
        "tasks/update", {"taskId": task_id, "inputResponses": {"x": {"a": 1}}}
    )
    assert (await client.get(task_id))["status"] == "working"


async def test_update_needs_an_object_of_responses(client):
    task_id = await client.create("held")
    _status, error = await client.error(
        "tasks/update", {"taskId": task_id, "inputResponses": [1]}
    )
    assert error["code"] == -32602


async def test_a_question_the_request_cannot_answer_fails_the_task(client):
    task_id = await client.create("asking")
    await settle()
    failed = await client.get(task_id)
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == -32021


async def test_cancel_while_working_stops_the_work(client):
    task_id = await client.create("held")
    await settle()
    ack = await client.result("tasks/cancel", {"taskId": task_id})
    assert set(ack) == {"resultType", "_meta"}
    await settle()
    cancelled = await client.get(task_id)
    assert cancelled["status"] == "cancelled"
    assert GATE["held"].ended == ["cancelled"]
    assert client.engine._tasks.running == {}


async def test_cancel_while_waiting_for_input(client):
    task_id = await client.create("asking", caps=ASKING)
    await settle()
    assert (await client.get(task_id))["status"] == "input_required"
    await client.result("tasks/cancel", {"taskId": task_id})
    await settle()
    cancelled = await client.get(task_id)
    assert cancelled["status"] == "cancelled"
    assert "inputRequests" not in cancelled
    assert GATE["asking"].ended == ["cancelled"]


async def test_cancel_of_an_ended_task_is_an_ack_that_changes_nothing(client):
    task_id = await client.create("quick")
    await settle()
    ack = await client.result("tasks/cancel", {"taskId": task_id})
    assert ack["resultType"] == "complete"
    assert (await client.get(task_id))["status"] == "completed"


async def test_a_task_is_forgotten_after_its_ttl():
    now = [1000.0]
    client = Client(engine(clock=lambda: now[0], task_ttl=60.0))
    task_id = await client.create("quick")
    await settle()
    now[0] += 59.0
    assert (await client.get(task_id))["status"] == "completed"
    now[0] += 2.0
    _status, error = await client.error("tasks/get", {"taskId": task_id})
    assert error["code"] == -32602


async def test_work_still_running_at_its_ttl_is_stopped():
    now = [1000.0]
    client = Client(engine(clock=lambda: now[0], task_ttl=60.0))
    task_id = await client.create("held")
    await settle()
    now[0] += 61.0
    _status, error = await client.error("tasks/get", {"taskId": task_id})
    assert error["code"] == -32602
    await settle()
    assert GATE["held"].ended == ["cancelled"]
    assert client.engine._tasks.running == {}


async def test_a_task_is_only_visible_to_its_principal():
    shared = engine()
    alice = Client(shared, principal="alice")
    mallory = Client(shared, principal="mallory")
    task_id = await alice.create("held")
    for method in ("tasks/get", "tasks/cancel", "tasks/update"):
        _status, error = await mallory.error(
            method, {"taskId": task_id, "inputResponses": {}}
        )
        assert error["code"] == -32602
    assert (await alice.get(task_id))["status"] == "working"


async def test_caps_per_principal_and_in_all():
    shared = engine(max_tasks=3, max_tasks_per_principal=2)
    alice = Client(shared, principal="alice")
    bob = Client(shared, principal="bob")
    await alice.create("held")
    await alice.create("held")
    reply = await alice.send("tools/call", {"name": "held", "arguments": {}})
    assert reply.status == 503
    assert reply.headers["Retry-After"] == "5"
    assert "Too many tasks" in reply.body["error"]["message"]
    await bob.create("held")
    reply = await bob.send("tools/call", {"name": "held", "arguments": {}})
    assert reply.status == 503


async def test_a_prelude_asks_in_the_request_then_becomes_a_task():
    client = Client(engine(state_secret="s"))
    first = await client.result(
        "tools/call", {"name": "prelude", "arguments": {}}, caps=ASKING
    )
    assert first["resultType"] == "input_required"
    assert "taskId" not in first
    (key,) = first["inputRequests"]
    params: dict[str, Any] = {
        "name": "prelude",
        "arguments": {},
        "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}},
    }
    if "requestState" in first:
        params["requestState"] = first["requestState"]
    second = await client.result("tools/call", params, caps=ASKING)
    assert second["resultType"] == "task"
    assert "requestState" not in second
    assert "inputRequests" not in second
    await settle()
    done = await client.get(second["taskId"])
    assert done["status"] == "completed"
    assert "started=True" in done["result"]["content"][0]["text"]


async def test_closing_the_engine_fails_running_tasks_with_a_reason(client):
    task_id = await client.create("held")
    await settle()
    record = await client.engine._tasks.store.get(task_id, None)
    await client.engine.aclose()
    await settle()
    assert record is not None
    assert record.status == "failed"
    assert record.error is not None
    assert "stopped" in record.error["message"]
    assert GATE["held"].ended == ["cancelled"]


async def test_a_task_is_not_bound_by_the_call_timeout():
    client = Client(engine(call_timeout=0.01))
    task_id = await client.create("held")
    await asyncio.sleep(0.05)
    assert (await client.get(task_id))["status"] == "working"
    GATE["held"].release.set()
    await settle()
    assert (await client.get(task_id))["status"] == "completed"
    assert GATE["held"].ended == ["finished"]


async def test_progress_in_a_task_is_its_status_message(client):
    task_id = await client.create("progressing")
    await settle()
    working = await client.get(task_id)
    assert working["status"] == "working"
    assert working["statusMessage"] == "Exporting rows (4 of 10)"
    GATE["held"].release.set()
    await settle()
    done = await client.get(task_id)
    assert done["status"] == "completed"
    assert "statusMessage" not in done


async def test_a_long_progress_note_is_cut():
    client = Client(engine())
    GATE["held"] = Gate()
    task_id = await client.create("progressing")
    record = await client.engine._tasks.store.get(task_id, None)
    assert record is not None
    await client.engine._tasks.progress(
        client.engine._tasks.running[task_id], 1, None, "y" * 5000
    )
    assert record.status_message is not None
    assert len(record.status_message) == 200


async def test_a_refreshed_token_of_the_same_subject_keeps_its_tasks():
    from wymcp.core.server import Principal

    shared = engine()
    before = Client(shared, principal=Principal("alice", expires_at=1000.0))
    after = Client(
        shared, principal=Principal("alice", scopes=["x"], expires_at=2000.0)
    )
    other = Client(shared, principal=Principal("bob", expires_at=1000.0))
    task_id = await before.create("held")
    assert (await after.get(task_id))["status"] == "working"
    _, error = await other.error("tasks/get", {"taskId": task_id})
    assert error["code"] == -32602


@pytest.mark.parametrize("task_id", [7, None, ["a"], {"a": 1}, ""])
async def test_a_task_id_that_is_not_a_string_is_32602(client, task_id):
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        status, error = await client.error(
            method, {"taskId": task_id, "inputResponses": {}}
        )
        assert (status, error["code"]) == (400, -32602)
        assert error["data"]["reason"] == "params.taskId must be a non-empty string."


async def test_a_required_prelude_without_the_extension_is_32021_before_asking():
    client = Client(engine(state_secret="s"))
    status, error = await client.error(
        "tools/call", {"name": "prelude", "arguments": {}}, caps={"elicitation": {}}
    )
    assert (status, error["code"]) == (400, -32021)


async def test_start_task_is_false_where_a_call_cannot_be_a_task():
    class MayStart(Tool):
        name = "may_start"
        description = "Tries to become a task."
        task_support = "optional"
        task_prelude = True

        async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
            return f"started={await ctx.start_task()}"

    client = Client(Engine(tools=[MayStart]))
    in_request = await client.result(
        "tools/call", {"name": "may_start", "arguments": {}}, caps={}
    )
    assert in_request["content"][0]["text"] == "started=False"
    task = await client.result("tools/call", {"name": "may_start", "arguments": {}})
    assert task["resultType"] == "task"
    await settle()
    done = await client.get(task["taskId"])
    assert done["result"]["content"][0]["text"] == "started=True"


async def test_a_task_call_runs_the_gates_once(client, monkeypatch):
    from wymcp.core.server import _call_tool

    fast = _call_tool.check_fast
    runs: list[str] = []

    def counted(spec: Any, action: Any, data: Any, **hints: Any) -> Any:
        runs.append(spec.name)
        return fast(spec, action, data, **hints)

    monkeypatch.setattr(_call_tool, "check_fast", counted)
    GATE["held"].release.set()
    task_id = await client.create("held", {"n": 3})
    await settle()
    done = await client.get(task_id)
    assert done["result"]["content"][0]["text"] == '{"n":3}'
    assert runs == ["held"]
    await client.result("tools/call", {"name": "sync", "arguments": {}})
    assert runs == ["held", "sync"]  # a call in its request: once as well
