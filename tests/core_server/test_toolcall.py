"""tools/call: the envelope, the gates, the tool's code, result shaping,
header annotations and the call's notification stream.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wymcp.core.schema import Action, Tool, ToolError
from wymcp.core.server import (
    Hint,
    ToolResult,
    audio,
    embedded_resource,
    image,
    resource_link,
    text,
)
from wymcp.core.server._result_limit import (
    over_limit,
    result_size,
    text_size,
    text_within,
)

MODERN = "2026-07-28"


class Widgets(Tool):
    name = "widgets"
    description = "Manage widgets."
    output_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"qty": {"type": "integer"}},
        "required": ["qty"],
    }
    actions: ClassVar[dict[str, Action]] = {
        "create": Action(
            description="Create a widget",
            properties={
                "name": {"type": "string", "minLength": 1},
                "qty": {"type": "integer", "maximum": 100},
            },
            required=["name"],
            defaults={"qty": 1},
        ),
        "fail": Action(description="Refuse politely", properties={}),
        "crash": Action(description="Raise", properties={}),
        "bad_output": Action(description="Break the output schema", properties={}),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        if action == "fail":
            raise ToolError("widget store is closed")
        if action == "crash":
            raise RuntimeError("boom at /secret/path")
        if action == "bad_output":
            return {"qty": "many"}
        return {"qty": data["qty"], "name": data["name"]}

    def hints(self, action: str, hint_context: Any) -> list[Hint]:
        if action == "create":
            return [Hint(tool="widgets", action="fail", description="then fail")]
        return []

    def action_context(self, action: str, ctx: Any) -> dict[str, Any] | None:
        return {"store": "open"} if action == "create" else None


class Media(Tool):
    name = "media"
    description = "Returns every kind of content."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return [
            text("hello"),
            image(b"\x89PNG", "image/png"),
            audio("UklGRg==", "audio/wav"),
            embedded_resource("test://r", text="inside", mime_type="text/plain"),
            resource_link("test://r", "r"),
        ]


class Chatty(Tool):
    name = "chatty"
    description = "Reports progress and logs."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        for step in (0, 50, 50, 100):
            await ctx.report_progress(step, 100, f"step {step}")
        await ctx.log("debug", "quiet")
        await ctx.log("info", {"said": "hello"}, logger="chatty")
        await ctx.log("error", "loud")
        return ToolResult(content=[text("done")])


class Region(Tool):
    name = "region"
    description = "Routed by a header."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "flag": {"type": "boolean", "x-mcp-header": "Flag"},
        },
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return f"ok {arguments.get('region')}"


@pytest.fixture
def wire(make_wire):
    return make_wire(Widgets, Media, Chatty, Region)


def call(action: str, data: Any = None, **extra: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {"action": action, **extra}
    if data is not None:
        arguments["data"] = data
    return {"name": "widgets", "arguments": arguments}


async def test_an_accepted_call_runs_with_defaults_merged(wire):
    reply, _ = await wire.modern("tools/call", call("create", {"name": "w"}))
    result = reply.body["result"]
    assert result["isError"] is False
    assert result["structuredContent"] == {"qty": 1, "name": "w"}
    shown = wire.result_json(reply)
    assert shown["qty"] == 1
    assert shown["hints"] == [
        {"tool": "widgets", "action": "fail", "description": "then fail"}
    ]
    assert shown["context"] == {"store": "open"}
    assert result["resultType"] == "complete"


async def test_a_whole_float_reaches_the_tool_as_an_integer(wire):
    reply, _ = await wire.modern(
        "tools/call", call("create", {"name": "w", "qty": 2.0})
    )
    assert reply.body["result"]["structuredContent"]["qty"] == 2
    assert isinstance(reply.body["result"]["structuredContent"]["qty"], int)


async def test_a_gate_refusal_is_an_is_error_result(wire):
    reply, _ = await wire.modern(
        "tools/call", call("create", {"name": "w", "bogus": 1})
    )
    assert reply.status == 200
    assert reply.body["result"]["isError"] is True
    refusal = wire.result_json(reply)
    assert refusal["error"] == "unknown_params"
    assert "help" in refusal


async def test_an_unknown_action_is_a_refusal_not_a_protocol_error(wire):
    reply, _ = await wire.modern("tools/call", call("nope"))
    assert reply.body["result"]["isError"] is True
    assert wire.result_json(reply)["error"] == "unknown_action"


async def test_a_value_refusal_quotes_no_value(wire):
    reply, _ = await wire.modern(
        "tools/call", call("create", {"name": "w", "qty": 123456})
    )
    refusal = wire.result_json(reply)
    assert refusal["error"] == "invalid_values"
    assert "123456" not in reply.body["result"]["content"][0]["text"]


async def test_a_tool_error_answers_is_error_with_its_message(wire):
    reply, _ = await wire.modern("tools/call", call("fail"))
    result = reply.body["result"]
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "widget store is closed"}]
    assert "structuredContent" not in result


async def test_a_raising_tool_answers_tool_raised_without_traceback(wire):
    reply, _ = await wire.modern("tools/call", call("crash"))
    result = reply.body["result"]
    assert result["isError"] is True
    payload = wire.result_json(reply)
    assert payload["errorType"] == "tool_raised"
    assert payload["tool"] == "widgets"
    assert payload["exception"] == "RuntimeError"
    assert "Traceback" not in result["content"][0]["text"]


async def test_an_output_that_breaks_the_schema_has_no_structured_content(wire):
    reply, _ = await wire.modern("tools/call", call("bad_output"))
    result = reply.body["result"]
    assert result["isError"] is False
    assert "structuredContent" not in result
    assert wire.result_json(reply) == {"qty": "many"}


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({}, "name"),
        ({"name": 5}, "name"),
        ({"name": "widgets", "arguments": []}, "arguments"),
        ({"name": "widgets", "arguments": "x"}, "arguments"),
    ],
)
async def test_what_is_no_call_of_a_known_tool_is_invalid_params(wire, params, reason):
    reply, _ = await wire.modern("tools/call", params)
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32602
    assert reason in reply.body["error"]["data"]["reason"]


ROOT_MISTAKES = [
    ({}, "'action' is missing"),
    ({"name": "w", "qty": 2}, "'action' is missing"),
    ({"action": 3}, "'action' is a number, not a string"),
    ({"action": None, "data": {}}, "'action' is missing"),
    ({"action": "create", "data": 3}, "'data' is a number, not an object"),
    ({"action": "create", "data": ["w"]}, "'data' is an array, not an object"),
    ({"action": "create", "extra": 1}, "'extra' is not among its arguments"),
    ({"action": "nope", "data": []}, "'nope' is not one of its actions"),
]


@pytest.mark.parametrize(("arguments", "said"), ROOT_MISTAKES)
async def test_root_mistakes_are_tool_execution_errors(wire, arguments, said):
    reply, _ = await wire.modern(
        "tools/call", {"name": "widgets", "arguments": arguments}
    )
    assert reply.status == 200
    result = reply.body["result"]
    assert result["isError"] is True
    assert "structuredContent" not in result
    refusal = wire.result_json(reply)
    assert refusal["error"] == "invalid_arguments"
    assert said in refusal["message"]
    assert "'action' (one of: bad_output, crash, create, fail)" in refusal["message"]
    assert refusal["tool"] == "widgets"
    assert refusal["valid_actions"] == ["bad_output", "crash", "create", "fail"]
    assert refusal["help"] == 'help {tool: "widgets"}'
    assert refusal["input_schema"]["required"] == ["action"]


@pytest.mark.parametrize(("arguments", "said"), ROOT_MISTAKES[:3])
async def test_root_mistakes_in_a_session_are_tool_execution_errors(
    wire, arguments, said
):
    sid = await wire.initialize()
    reply, _ = await wire.session(
        sid, "tools/call", {"name": "widgets", "arguments": arguments}
    )
    assert reply.status == 200
    assert reply.body["result"]["isError"] is True
    refusal = wire.result_json(reply)
    assert refusal["error"] == "invalid_arguments"
    assert said in refusal["message"]


async def test_data_fields_sent_bare_are_pointed_into_data(wire):
    reply, _ = await wire.modern(
        "tools/call", {"name": "widgets", "arguments": {"name": "w", "qty": 2}}
    )
    refusal = wire.result_json(reply)
    assert refusal["unknown"] == ["arguments.name", "arguments.qty"]
    assert refusal["did_you_mean"] == {
        "arguments.name": "data.name",
        "arguments.qty": "data.qty",
    }
    assert "an action's fields go inside 'data'" in refusal["message"]


async def test_a_root_refusal_is_bounded_and_quotes_no_value(wire):
    arguments: dict[str, Any] = {f"{'k' * 500}{i}": "VALUE" * 100 for i in range(5000)}
    arguments["data"] = "SECRET"
    reply, _ = await wire.modern(
        "tools/call", {"name": "widgets", "arguments": arguments}
    )
    text = reply.body["result"]["content"][0]["text"]
    assert "VALUE" not in text
    assert "SECRET" not in text
    refusal = wire.result_json(reply)
    assert refusal["unknown_count"] == 5000
    assert len(refusal["unknown"]) == 10
    request_part = {
        k: v for k, v in refusal.items() if k not in ("input_schema", "valid_actions")
    }
    assert len(json.dumps(request_part).encode()) < 4096


async def test_lenient_mode_still_refuses_a_malformed_envelope(make_wire):
    wire = make_wire(Widgets, strict=False)
    reply, _ = await wire.modern(
        "tools/call", {"name": "widgets", "arguments": {"action": "fail", "x": 1}}
    )
    assert wire.result_json(reply)["error"] == "invalid_arguments"


async def test_a_typo_in_data_is_answered_in_one_round(wire):
    reply, _ = await wire.modern("tools/call", call("create", {"nmae": "w", "qty": 5}))
    refusal = wire.result_json(reply)
    assert refusal["error"] == "unknown_params"
    assert refusal["missing"] == ["name"]
    assert refusal["did_you_mean"] == {"data.nmae": "data.name"}


async def test_an_unknown_tool_is_invalid_params_naming_the_valid_tools(wire):
    reply, _ = await wire.modern("tools/call", {"name": "nope" * 100})
    error = reply.body["error"]
    assert error["code"] == -32602
    assert "widgets" in error["data"]["reason"]
    assert len(str(reply.body)) < 1000


async def test_an_unknown_tool_in_a_session_is_invalid_params_with_200(wire):
    sid = await wire.initialize()
    reply, _ = await wire.session(sid, "tools/call", {"name": "nope"})
    assert reply.status == 200
    assert reply.body["error"]["code"] == -32602


async def test_a_null_data_and_missing_arguments_mean_empty(wire):
    reply, _ = await wire.modern("tools/call", call("fail", None))
    assert reply.body["result"]["isError"] is True
    reply, _ = await wire.modern("tools/call", {"name": "media"})
    assert reply.body["result"]["isError"] is False


async def test_content_helpers_produce_every_block(wire):
    reply, _ = await wire.modern("tools/call", {"name": "media", "arguments": {}})
    kinds = [b["type"] for b in reply.body["result"]["content"]]
    assert kinds == ["text", "image", "audio", "resource", "resource_link"]
    assert reply.body["result"]["content"][1]["data"] == "iVBORw=="


async def test_a_resource_link_becomes_text_at_2025_03_26(wire):
    sid = await wire.initialize("2025-03-26")
    reply, _ = await wire.session(
        sid, "tools/call", {"name": "media"}, version="2025-03-26"
    )
    kinds = [b["type"] for b in reply.body["result"]["content"]]
    assert kinds[-1] == "text"


async def test_lenient_mode_lists_dropped_keys_in_result_meta(make_wire):
    wire = make_wire(Widgets, strict=False)
    reply, _ = await wire.modern(
        "tools/call", call("create", {"name": "w", "bogus": 1})
    )
    result = reply.body["result"]
    assert result["isError"] is False
    assert result["_meta"]["wymcp/dropped"] == ["data.bogus"]
    assert "io.modelcontextprotocol/serverInfo" in result["_meta"]


# ------------------------------------------------------------- notifications


async def test_progress_streams_only_with_a_token_and_logs_only_with_a_level(wire):
    reply, stream = await wire.modern("tools/call", {"name": "chatty"})
    assert stream.messages == []
    assert not stream.opened
    assert reply.body["result"]["content"] == [{"type": "text", "text": "done"}]


async def test_progress_notifications_increase_and_carry_the_token(wire):
    meta = wire.meta(progressToken="p1")
    reply, stream = await wire.modern("tools/call", {"name": "chatty"}, meta=meta)
    progress = [
        m["params"] for m in stream.messages if m["method"] == "notifications/progress"
    ]
    assert [p["progress"] for p in progress] == [0, 50, 100]
    assert all(p["progressToken"] == "p1" for p in progress)
    assert not any(m["method"] == "notifications/message" for m in stream.messages)
    assert reply.body["result"]["content"][0]["text"] == "done"


async def test_logs_at_2026_follow_the_request_log_level(wire):
    meta = wire.meta(**{"io.modelcontextprotocol/logLevel": "info"})
    _, stream = await wire.modern("tools/call", {"name": "chatty"}, meta=meta)
    logs = [
        m["params"] for m in stream.messages if m["method"] == "notifications/message"
    ]
    assert [entry["level"] for entry in logs] == ["info", "error"]
    assert logs[0]["logger"] == "chatty"


async def test_logs_at_2025_follow_set_level(wire):
    sid = await wire.initialize()
    _, stream = await wire.session(sid, "tools/call", {"name": "chatty"})
    assert [m["params"]["level"] for m in stream.messages] == ["debug", "info", "error"]
    await wire.session(sid, "logging/setLevel", {"level": "error"})
    _, stream = await wire.session(sid, "tools/call", {"name": "chatty"})
    assert [m["params"]["level"] for m in stream.messages] == ["error"]


async def test_a_gone_stream_does_not_fail_the_call(wire):
    meta = wire.meta(progressToken=3, **{"io.modelcontextprotocol/logLevel": "debug"})
    reply, _ = await wire.modern(
        "tools/call", {"name": "chatty"}, meta=meta, stream=wire.Stream(fail=True)
    )
    assert reply.body["result"]["isError"] is False


# ------------------------------------------------------------ Mcp-Param-*


def region_headers(*pairs: tuple[str, str]) -> list[tuple[str, str]]:
    return list(pairs)


@pytest.mark.parametrize(
    ("arguments", "headers", "status"),
    [
        ({"region": "Hello"}, [("Mcp-Param-Region", "Hello")], 200),
        ({"region": "Hello"}, [("Mcp-Param-Region", "=?base64?SGVsbG8=?=")], 200),
        ({"region": "Hello"}, [("Mcp-Param-Region", "=?base64?SGVsbG8?=")], 400),
        ({"region": "Hello"}, [("Mcp-Param-Region", "=?base64?SGVs!!!bG8=?=")], 400),
        ({"region": "SGVsbG8="}, [("Mcp-Param-Region", "SGVsbG8=")], 200),
        (
            {"region": "=?base64?SGVsbG8="},
            [("Mcp-Param-Region", "=?base64?SGVsbG8=")],
            200,
        ),
        ({"region": "Hello"}, [], 400),
        ({"region": "Hello"}, [("Mcp-Param-Region", "Other")], 400),
        ({}, [("Mcp-Param-Region", "Hello")], 400),
        ({}, [], 200),
        ({"region": None}, [], 200),
        ({"region": "a"}, [("Mcp-Param-Region", "a"), ("mcp-param-region", "a")], 400),
        ({"count": 42}, [("Mcp-Param-Count", "42")], 200),
        ({"count": 42.0}, [("Mcp-Param-Count", "42")], 200),
        ({"count": 42}, [("Mcp-Param-Count", "42.0")], 400),
        ({"count": 5}, [("Mcp-Param-Count", "9" * 5000)], 400),
        ({"region": "é"}, [("Mcp-Param-Region", "é")], 400),
        ({"region": "\udcff"}, [("Mcp-Param-Region", "\udcff")], 400),
        ({"region": "a\tb"}, [("Mcp-Param-Region", "a\tb")], 400),
        ({"region": "é"}, [("Mcp-Param-Region", "=?base64?w6k=?=")], 200),
        ({"region": "a b"}, [("Mcp-Param-Region", "a b")], 200),
        ({"count": 5}, [("Mcp-Param-Count", "0" * 5000 + "5")], 200),
        ({"count": -5}, [("Mcp-Param-Count", "-005")], 200),
        ({"count": 0}, [("Mcp-Param-Count", "-0")], 200),
        ({"flag": True}, [("Mcp-Param-Flag", "true")], 200),
        ({"flag": False}, [("Mcp-Param-Flag", "true")], 400),
    ],
)
async def test_param_headers_must_mirror_annotated_arguments(
    wire, arguments, headers, status
):
    reply, _ = await wire.modern(
        "tools/call", {"name": "region", "arguments": arguments}, extra_headers=headers
    )
    assert reply.status == status
    if status == 400:
        assert reply.body["error"]["code"] == -32020
    else:
        assert "error" not in reply.body


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ([], 200),
        ([("Mcp-Param-Region", "north")], 200),  # no annotation: nothing to mirror
        ([("Mcp-Param-Region", "a"), ("mcp-param-region", "a")], 400),
        ([("X-Other", "a"), ("x-other", "b")], 200),
    ],
)
async def test_a_tool_without_annotations_still_refuses_a_repeated_param_header(
    wire, headers, status
):
    """Skipping `check_params` when there is nothing to compare keeps its refusal."""
    reply, _ = await wire.modern("tools/call", call("list"), extra_headers=headers)
    assert reply.status == status, reply.body
    if status == 400:
        assert reply.body["error"]["code"] == -32020
        assert "more than once" in reply.body["error"]["message"]


async def test_param_headers_are_not_checked_in_sessions(wire):
    sid = await wire.initialize()
    reply, _ = await wire.session(
        sid, "tools/call", {"name": "region", "arguments": {"region": "x"}}
    )
    assert reply.body["result"]["content"][0]["text"] == "ok x"


# ------------------------------------------------------------- cancellation


class Slow(Tool):
    name = "slow"
    description = "Waits."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        await asyncio.sleep(3600)
        return "never"


async def test_notifications_cancelled_stops_a_session_call(make_wire):
    wire = make_wire(Slow)
    sid = await wire.initialize()
    task = asyncio.create_task(
        wire.session(sid, "tools/call", {"name": "slow"}, rid=11)
    )
    for _ in range(5):
        await asyncio.sleep(0)
    reply, _ = await wire.post(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 11},
        },
        [("Mcp-Session-Id", sid)],
        revision="2025-11-25",
    )
    assert reply.status == 202
    cancelled, _ = await task
    assert cancelled.status == 204
    assert cancelled.body is None
    assert not task.cancelled()


class Stubborn(Tool):
    name = "stubborn"
    description = "Swallows its cancellation."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            return "swallowed"
        return "never"


async def test_a_swallowed_cancellation_leaves_the_task_clean(make_wire):
    wire = make_wire(Stubborn)
    sid = await wire.initialize()

    async def call_and_check():
        reply, _ = await wire.session(sid, "tools/call", {"name": "stubborn"}, rid=12)
        return reply, asyncio.current_task().cancelling()

    task = asyncio.create_task(call_and_check())
    for _ in range(5):
        await asyncio.sleep(0)
    await wire.post(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 12},
        },
        [("Mcp-Session-Id", sid)],
        revision="2025-11-25",
    )
    reply, cancelling = await task
    assert reply.body["result"]["content"][0]["text"] == "swallowed"
    assert cancelling == 0


class Sleepy(Tool):
    name = "sleepy"
    description = "Hangs, swallows a cancellation, or times itself out."
    actions: ClassVar[dict[str, Action]] = {
        "hang": Action(description="Never finish", properties={}),
        "own_timeout": Action(description="Raise TimeoutError", properties={}),
        "quick": Action(description="Finish at once", properties={}),
    }
    cancelled: ClassVar[list[str]] = []

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        if action == "hang":
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                Sleepy.cancelled.append(action)
                raise
        if action == "own_timeout":
            raise TimeoutError("the upstream API timed out")
        return {"done": True}


def sleepy(action: str) -> dict[str, Any]:
    return {"name": "sleepy", "arguments": {"action": action}}


async def test_a_hanging_tool_is_stopped_after_call_timeout(make_wire):
    wire = make_wire(Sleepy, call_timeout=0.05)
    reply, _ = await wire.modern("tools/call", sleepy("hang"))
    result = reply.body["result"]
    assert result["isError"] is True
    shown = wire.result_json(reply)
    assert shown["errorType"] == "call_timeout"
    assert (shown["tool"], shown["action"]) == ("sleepy", "hang")
    assert "did not finish within 0.05 seconds (CALL_TIMEOUT)" in shown["message"]
    assert Sleepy.cancelled == ["hang"]
    reply, _ = await wire.modern("tools/call", sleepy("quick"))
    assert wire.result_json(reply) == {"done": True}


async def test_a_tools_own_timeout_error_is_tool_raised_not_call_timeout(make_wire):
    wire = make_wire(Sleepy, call_timeout=30)
    reply, _ = await wire.modern("tools/call", sleepy("own_timeout"))
    shown = wire.result_json(reply)
    assert shown["errorType"] == "tool_raised"
    assert shown["exception"] == "TimeoutError"


class Grouped(Tool):
    """Uses a TaskGroup whose child fails, and a timeout of its own."""

    name = "grouped"
    description = "Structured concurrency inside a call."
    actions: ClassVar[dict[str, Action]] = {
        "group": Action(description="A child fails", properties={}),
        "own_deadline": Action(description="Its own timeout", properties={}),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        if action == "own_deadline":
            try:
                async with asyncio.timeout(0.01):
                    await asyncio.Event().wait()
            except TimeoutError:
                await asyncio.sleep(0)
                return {"own_deadline": "passed"}

        async def fails() -> None:
            await asyncio.sleep(0)
            raise ValueError("child failed")

        async def cleans_up() -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                await asyncio.sleep(0.01)
                raise

        outcome = "not handled"
        try:
            async with asyncio.TaskGroup() as tasks:
                tasks.create_task(fails())
                tasks.create_task(cleans_up())
        except* ValueError:
            outcome = "handled"
        return {"group": outcome}


@pytest.mark.parametrize(
    ("action", "shown"),
    [("group", {"group": "handled"}), ("own_deadline", {"own_deadline": "passed"})],
)
async def test_a_tools_own_cancellations_work_under_call_timeout(
    make_wire, action, shown
):
    wire = make_wire(Grouped, call_timeout=30)
    arguments = {"name": "grouped", "arguments": {"action": action}}
    reply, _ = await wire.modern("tools/call", arguments)
    assert wire.result_json(reply) == shown
    sid = await wire.initialize()
    reply, _ = await wire.session(sid, "tools/call", arguments)
    assert wire.result_json(reply) == shown


async def test_a_session_call_times_out_too(make_wire):
    wire = make_wire(Sleepy, call_timeout=0.05)
    sid = await wire.initialize()
    reply, _ = await wire.session(sid, "tools/call", sleepy("hang"))
    assert wire.result_json(reply)["errorType"] == "call_timeout"


async def test_a_refusal_is_walked_off_the_event_loop_and_an_accepted_call_on_it(
    wire, monkeypatch
):
    import threading

    from wymcp.core.server import _call_tool

    threads: list[int] = []
    checked = _call_tool.check

    def recording(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.get_ident())
        return checked(*args, **kwargs)

    monkeypatch.setattr(_call_tool, "check", recording)
    loop_thread = threading.get_ident()
    reply, _ = await wire.modern("tools/call", call("create", {"name": "w"}))
    assert reply.body["result"]["isError"] is False
    assert threads == []
    reply, _ = await wire.modern("tools/call", call("create", {"name": ["x"] * 50}))
    assert wire.result_json(reply)["error"] == "invalid_values"
    assert len(threads) == 1
    assert threads[0] != loop_thread


# ------------------------------------------------ what a raising tool tells


class Leaky(Tool):
    name = "leaky"
    description = "Raises exceptions that carry secrets."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    SECRET: ClassVar[str] = "postgresql://admin:hunter2@db.internal/prod"

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        raise ConnectionError(f"could not connect to {self.SECRET} from /home/alice")


async def test_a_raising_tool_sends_its_class_and_a_reference_not_its_message(
    make_wire, caplog
):
    wire = make_wire(Leaky)
    with caplog.at_level(logging.ERROR, logger="wymcp.core.server"):
        reply, _ = await wire.modern("tools/call", {"name": "leaky", "arguments": {}})
    body = json.dumps(reply.body)
    assert "hunter2" not in body
    assert "/home/alice" not in body
    shown = wire.result_json(reply)
    assert shown["errorType"] == "tool_raised"
    assert shown["exception"] == "ConnectionError"
    reference = shown["reference"]
    assert re.fullmatch(r"[0-9a-f]{8}", reference)
    assert reference in shown["message"]
    # the log has the reference with the traceback and the message
    record = next(r for r in caplog.records if reference in r.getMessage())
    assert record.exc_info is not None
    assert "hunter2" in caplog.text
    assert "Traceback" in caplog.text


async def test_expose_exception_messages_sends_the_cut_message(make_wire):
    wire = make_wire(Leaky, expose_exception_messages=True)
    Leaky.SECRET = "x" * 2000
    try:
        reply, _ = await wire.modern("tools/call", {"name": "leaky", "arguments": {}})
    finally:
        Leaky.SECRET = "postgresql://admin:hunter2@db.internal/prod"
    shown = wire.result_json(reply)
    assert shown["message"].startswith("could not connect to xxx")
    assert len(shown["message"]) == 501
    assert shown["reference"]


async def test_two_raises_get_two_references(make_wire):
    wire = make_wire(Leaky)
    first, _ = await wire.modern("tools/call", {"name": "leaky", "arguments": {}})
    second, _ = await wire.modern("tools/call", {"name": "leaky", "arguments": {}})
    assert wire.result_json(first)["reference"] != wire.result_json(second)["reference"]


# ------------------------------------------------------------- RESULT_LIMIT


class Big(Tool):
    name = "big"
    description = "Returns as much as it is asked for."
    output_schema: ClassVar[dict[str, Any]] = {"type": "object"}
    actions: ClassVar[dict[str, Action]] = {
        "text": Action(
            description="A text of n characters",
            properties={"n": {"type": "integer"}, "char": {"type": "string"}},
        ),
        "rows": Action(description="n rows", properties={"n": {"type": "integer"}}),
        "structured": Action(
            description="A small text and a big structured value",
            properties={"n": {"type": "integer"}},
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        n = data.get("n", 0)
        if action == "text":
            return data.get("char", "a") * n
        if action == "rows":
            return {"rows": [{"id": i, "name": "row"} for i in range(n)]}
        return ToolResult(content=[text("see structured")], structured={"v": "b" * n})


def big(action: str, **data: Any) -> dict[str, Any]:
    return {"name": "big", "arguments": {"action": action, "data": data}}


@pytest.mark.parametrize(
    ("arguments", "allowed"),
    [
        (big("text", n=1000), True),
        (big("text", n=5000), False),
        (big("text", n=900, char="é"), True),  # 1,800 bytes
        (big("text", n=1500, char="é"), False),  # 1,500 characters, 3,000 bytes
        (big("rows", n=20), True),
        (big("rows", n=200), False),
        (big("structured", n=2500), False),
    ],
)
async def test_a_result_over_result_limit_answers_result_too_large(
    make_wire, arguments, allowed
):
    wire = make_wire(Big, result_limit=2048)
    reply, _ = await wire.modern("tools/call", arguments)
    result = reply.body["result"]
    if allowed:
        assert result["isError"] is False
        return
    assert result["isError"] is True
    shown = wire.result_json(reply)
    assert shown["errorType"] == "result_too_large"
    assert shown["limit"] == 2048
    assert "2048 bytes (RESULT_LIMIT)" in shown["message"]
    assert len(json.dumps(reply.body)) < 1024  # nothing of the result is sent


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.text(max_size=300), min_size=1, max_size=4),
    annotated=st.booleans(),
)
def test_the_counted_size_is_at_least_the_encoded_size(texts, annotated):
    """Counting strings as UTF-8 (escapes included) never undercounts the JSON."""
    content: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
    if annotated:
        content[0]["annotations"] = {"audience": ["user"], "priority": 0.5}
    encoded = len(json.dumps(content, ensure_ascii=False).encode())
    counted = result_size(content)
    assert encoded <= counted <= encoded + 64 * (len(content) + 4)


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(st.text(max_size=300), max_size=4),
    annotated=st.booleans(),
    structured=st.none() | st.text(max_size=300),
    limit=st.integers(min_value=0, max_value=4000),
)
def test_the_bound_decides_as_the_exact_count(texts, annotated, structured, limit):
    """RESULT_LIMIT's quick bound never lets through what the exact count refuses."""
    content: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
    if annotated and content:
        content[0]["annotations"] = {"audience": ["user"], "priority": 0.5}
    exact = result_size(content)
    if structured is not None:
        exact += text_size(structured)
    assert over_limit(content, structured, limit) == (exact if exact > limit else None)


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(max_size=300),
    structured=st.none() | st.text(max_size=300),
    limit=st.integers(min_value=0, max_value=4000),
)
def test_a_plain_text_within_its_bound_is_within_the_limit(text, structured, limit):
    """`text_within` (the usual result's shortcut) passes only what fits exactly."""
    content = [{"type": "text", "text": text}]
    if text_within(text, structured, limit):
        assert over_limit(content, structured, limit) is None
        exact = result_size(content)
        if structured is not None:
            exact += text_size(structured)
        assert exact <= limit


# -------------------------------------------- CALL_TIMEOUT is a bound


class Obstinate(Tool):
    """Swallows every cancellation until released."""

    name = "obstinate"
    description = "Ignores its cancellation."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.cancellations = 0
        self.finished = False

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        while not self.release.is_set():
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancellations += 1
        self.finished = True
        return "finished anyway"


async def test_a_tool_that_swallows_its_cancellation_still_answers_call_timeout(
    make_wire,
):
    tool = Obstinate()
    wire = make_wire(tool, call_timeout=0.05)
    reply, _ = await wire.modern("tools/call", {"name": "obstinate", "arguments": {}})
    shown = wire.result_json(reply)
    assert shown["errorType"] == "call_timeout"
    assert tool.cancellations == 1
    assert not tool.finished  # answered without waiting for the tool
    assert wire.engine._deadlines.overdue == 1
    tool.release.set()
    for _ in range(5):
        await asyncio.sleep(0)
    assert tool.finished
    assert wire.engine._deadlines.overdue == 0


async def test_a_stopped_tool_running_on_is_named_after_the_tool(make_wire):
    """The deadline's label, joined only once the call waits, names its task."""
    tool = Obstinate()
    wire = make_wire(tool, call_timeout=0.05)
    reply, _ = await wire.modern("tools/call", {"name": "obstinate", "arguments": {}})
    assert wire.result_json(reply)["errorType"] == "call_timeout"
    overdue = list(wire.engine._deadlines._overdue)
    assert [task.get_name() for task in overdue] == ["wymcp tool obstinate"]
    tool.release.set()
    await asyncio.gather(*overdue)


async def test_a_session_call_that_swallows_its_cancellation_answers_too(make_wire):
    tool = Obstinate()
    wire = make_wire(tool, call_timeout=0.05)
    sid = await wire.initialize()
    reply, _ = await wire.session(sid, "tools/call", {"name": "obstinate"})
    assert wire.result_json(reply)["errorType"] == "call_timeout"
    assert not tool.finished
    tool.release.set()


class Awaitable(Tool):
    """Returns an awaitable that is not a coroutine."""

    name = "awaitable"
    description = "Returns a future."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def run(self, arguments: dict[str, Any], ctx: Any) -> Any:  # type: ignore[override]
        future = asyncio.get_running_loop().create_future()
        future.set_result("from a future")
        return future


async def test_a_tool_returning_any_awaitable_runs_under_call_timeout(make_wire):
    wire = make_wire(Awaitable, call_timeout=5)
    reply, _ = await wire.modern("tools/call", {"name": "awaitable", "arguments": {}})
    assert reply.body["result"]["content"] == [
        {"type": "text", "text": "from a future"}
    ]


class Routed(Tool):
    """A multi-action tool whose hand-written schema adds a root argument."""

    name = "routed"
    description = "Multi-action, routed by a root header."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "action": {"type": "string"},
            "data": {"type": "object"},
            "region": {"type": "string", "x-mcp-header": "Region"},
        },
        "required": ["action"],
    }
    actions: ClassVar[dict[str, Action]] = {
        "echo": Action(
            description="Echo n", properties={"n": {"type": "integer"}}, required=["n"]
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        return {"action": action, "data": data}


async def test_a_declared_root_argument_beside_action_and_data_runs_the_action(
    make_wire,
):
    # Not the common {action, data} envelope: the careful split reads it.
    wire = make_wire(Routed)
    arguments = {"action": "echo", "data": {"n": 3}, "region": "eu"}
    reply, _ = await wire.modern(
        "tools/call",
        {"name": "routed", "arguments": arguments},
        extra_headers=[("Mcp-Param-Region", "eu")],
    )
    result = reply.body["result"]
    assert result["isError"] is False
    assert wire.result_json(reply) == {"action": "echo", "data": {"n": 3}}
    stray = {"action": "echo", "data": {"n": 3}, "zone": "eu"}
    reply, _ = await wire.modern("tools/call", {"name": "routed", "arguments": stray})
    assert reply.body["result"]["isError"] is True
    assert wire.result_json(reply)["error"] == "invalid_arguments"


class OnlyContext(Tool):
    """Overrides action_context alone; returns a value that is no object."""

    name = "only_context"
    description = "A list and its context."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return [1, 2]

    def action_context(self, action: str, ctx: Any) -> dict[str, Any] | None:
        return {"page": 1}


class OnlyHints(Tool):
    """Overrides hints alone."""

    name = "only_hints"
    description = "An object and its hints."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return {"n": 1}

    def hints(self, action: str, hint_context: Any) -> list[Any]:
        return [{"tool": "only_hints", "description": "again"}]


class BaseHooks(Tool):
    """Keeps the base class's hooks: they are not asked."""

    name = "base_hooks"
    description = "A number."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return 7


async def test_each_overridden_hook_adds_its_part_alone(make_wire):
    wire = make_wire(OnlyContext, OnlyHints, BaseHooks)
    reply, _ = await wire.modern("tools/call", {"name": "only_context"})
    content = reply.body["result"]["content"]
    assert [block["text"] for block in content] == ["[1,2]", '{"context":{"page":1}}']
    reply, _ = await wire.modern("tools/call", {"name": "only_hints"})
    (block,) = reply.body["result"]["content"]
    assert block["text"] == (
        '{"n":1,"hints":[{"tool":"only_hints","description":"again"}]}'
    )
    reply, _ = await wire.modern("tools/call", {"name": "base_hooks"})
    assert reply.body["result"]["content"] == [{"type": "text", "text": "7"}]


async def test_a_hook_set_on_the_instance_is_asked_too(make_wire):
    tool = BaseHooks()
    tool.hints = lambda action, value: [{"tool": "base_hooks"}]  # type: ignore[method-assign]
    wire = make_wire(tool)
    reply, _ = await wire.modern("tools/call", {"name": "base_hooks"})
    texts = [block["text"] for block in reply.body["result"]["content"]]
    assert texts == ["7", '{"hints":[{"tool":"base_hooks"}]}']


async def test_an_action_context_set_on_the_instance_is_asked_too(make_wire):
    tool = BaseHooks()
    tool.action_context = lambda action, ctx: {"page": 2}  # type: ignore[method-assign]
    wire = make_wire(tool)
    reply, _ = await wire.modern("tools/call", {"name": "base_hooks"})
    texts = [block["text"] for block in reply.body["result"]["content"]]
    assert texts == ["7", '{"context":{"page":2}}']


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # nan and the infinities too: encoded as json.dumps does
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text() | st.integers() | st.booleans(), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300)
@given(_JSON_VALUES)
def test_the_result_text_is_what_json_dumps_writes(value):
    from wymcp.core.server._call_tool import _dumps

    assert _dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_the_result_text_of_an_int_or_str_kind_is_what_json_dumps_writes():
    """The int and str shortcuts write their subclasses as `json.dumps` does."""
    import enum

    from wymcp.core.server._call_tool import _dumps

    class Level(enum.IntEnum):
        HIGH = 3

    class Name(str):
        __slots__ = ()

    for value in (True, False, Level.HIGH, Name('a "b"\n'), -(2**80), "\u2028\x00"):
        assert _dumps(value) == json.dumps(
            value, ensure_ascii=False, separators=(",", ":")
        )
    with pytest.raises(ValueError, match="4300") as ours:
        _dumps(10**5000)
    with pytest.raises(ValueError, match="4300") as theirs:
        json.dumps(10**5000)
    assert str(ours.value) == str(theirs.value)


def test_the_result_text_refuses_what_json_dumps_refuses():
    from wymcp.core.server._call_tool import _dumps

    loop: list[Any] = []
    loop.append(loop)
    for value in (object(), {(1, 2): 3}, [1, {"a": {1, 2}}], loop):
        with pytest.raises((TypeError, ValueError)) as ours:
            _dumps(value)
        with pytest.raises((TypeError, ValueError)) as theirs:
            json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        assert type(ours.value) is type(theirs.value)
        assert str(ours.value) == str(theirs.value)
    assert _dumps([1]) == "[1]"  # a failed encoding leaves nothing behind


_ENVELOPES = [
    {"action": "create", "data": {"name": "a"}},
    {"action": "create", "data": {"name": "a", "qty": 2.0}},
    {"action": "create", "data": None},
    {"action": "create"},
    {"action": "create", "data": {"name": ""}},
    {"action": "create", "data": []},
    {"action": "create", "data": {"name": "a"}, "extra": 1},
    {"action": 5, "data": {}},
    {"action": "nope", "data": {}},
    {"data": {"name": "a"}},
    {},
]


@pytest.mark.parametrize("arguments", _ENVELOPES)
async def test_the_envelope_read_at_once_opens_as_the_gates_would(arguments):
    """`gate_arguments` reads the usual envelope itself: it answers as the gates do."""
    from wymcp.core.gates import check
    from wymcp.core.schema import prepare
    from wymcp.core.server._call_tool import _split, gate_arguments

    spec = prepare(Widgets())
    opened = await gate_arguments(spec, arguments, strict=True)
    split = _split(spec, arguments)  # the gates' own reading of the envelope
    if isinstance(split, dict):
        assert opened == split
        return
    action, data = split
    verdict = check(spec, action, data, strict=True)
    if not verdict.accepted:
        assert opened["isError"] is True
        assert json.loads(opened["content"][0]["text"]) == verdict.refusal
        return
    assert isinstance(opened, tuple)
    assert opened[0] == action
    assert opened[1].data == verdict.data
