"""RATE_LIMITS rules with a `method`: requests refused before dispatch, 429.

What is counted: every request reaching a method (help and task methods
included), never `initialize`, notifications or the client's answers; at
2026-07-28 the retry carrying the client's answers is a new `tools/call`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ops_tools import Jobs
from wymcp.conf import ImproperlyConfigured, load_settings
from wymcp.core.schema import Action, Tool
from wymcp.core.server import CallRecord, Next, RateRule
from wymcp.testing import Answer, Client
from wymcp.transport.aiohttp import create_app

GATE_OPEN = asyncio.Event()


class Hold(Tool):
    """Waits until the test opens the gate (a request that stays running)."""

    name = "hold"
    description = "Hold until released."
    input_schema = {"type": "object", "properties": {}}  # noqa: RUF012 - a tool's declaration

    async def run(self, arguments: dict[str, Any], ctx: Any) -> str:
        await GATE_OPEN.wait()
        return "released"


class Asker(Tool):
    """Asks the user's name: a server->client request, answered by the client."""

    name = "asker"
    description = "Greet the user by name."
    actions = {"greet": Action(description="Greet", properties={})}  # noqa: RUF012 - a tool's declaration

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> Any:
        del action, data
        answer = await ctx.elicit("Your name?", {"type": "object", "properties": {}})
        return {"hello": answer.get("content", {}).get("name")}


def _assert_429(answer: Answer, *, most_ms: int) -> int:
    """The refusal before dispatch; returns its `retry_after_ms`."""
    assert answer.status == 429
    assert answer.response is not None
    assert answer.result is None
    error = answer.error
    assert error is not None
    assert error["code"] == -32600
    retry = error["data"]["retry_after_ms"]
    assert error["data"] == {"error": "rate_limited", "retry_after_ms": retry}
    assert (
        error["message"] == f"Too many requests: wait {retry} ms, then send it again."
    )
    assert 0 < retry <= most_ms
    assert answer.headers["Retry-After"] == str(-(-retry // 1000))
    assert answer.response["id"] is not None
    return int(retry)


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_method_rule_refuses_the_next_request_429_with_retry_after(
    version: str,
):
    app = create_app(
        TOOLS=[Jobs],
        RATE_LIMITS=[{"method": "tools/list", "rate": "2/min", "burst": 2}],
    )
    async with Client(app, protocol_version=version) as client:
        listed = [await client.request("tools/list") for _ in range(2)]
        refused = await client.request("tools/list")
        # another method, and tool calls, are not counted by this rule
        called = [await client.call("jobs", "run", {"size": 1}) for _ in range(3)]
    assert [a.status for a in listed] == [200, 200]
    assert all(a.result is not None for a in listed)
    retry = _assert_429(refused, most_ms=30_000)
    assert retry > 25_000  # 2 per minute: the third may come 30 s after the first
    assert [c.value for c in called] == [{"size": 1}] * 3


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_every_request_counts_under_star_help_included(version: str):
    app = create_app(
        TOOLS=[Jobs], RATE_LIMITS=[{"method": "*", "rate": "3/h", "burst": 3}]
    )
    async with Client(app, protocol_version=version) as client:
        # at 2025 the client sent initialize and notifications/initialized:
        # neither is counted, so three requests still pass
        first = await client.request("tools/list")
        second = await client.call("jobs", "run", {"size": 1})
        third = await client.help("jobs")
        help_refused = await client.request(
            "tools/call", {"name": "help", "arguments": {"tool": "jobs"}}
        )
        call_refused = await client.request(
            "tools/call", {"name": "jobs", "arguments": {"action": "pick"}}
        )
    assert first.status == 200
    assert second.value == {"size": 1}
    assert not third.is_error
    _assert_429(help_refused, most_ms=1_200_000)
    # refused before dispatch: no gate ran (the call had no `data`)
    _assert_429(call_refused, most_ms=1_200_000)


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_client_answers_are_not_counted_but_a_2026_retry_is(version: str):
    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        del method, params
        return {"action": "accept", "content": {"name": "Ada"}}

    seen: list[str | None] = []

    async def note(call: CallRecord, call_next: Next) -> dict[str, Any]:
        seen.append(call.method)  # outside the limiter: every request dispatched
        return await call_next()

    app = create_app(
        TOOLS=[Asker],
        MIDDLEWARE=[note],
        RATE_LIMITS=[{"method": "*", "rate": "4/h", "burst": 4}],
    )
    async with Client(
        app,
        protocol_version=version,
        capabilities={"elicitation": {}},
        on_request=answer,
    ) as client:
        greeted = await client.call("asker", "greet")
        assert greeted.value == {"hello": "Ada"}
        before = list(seen)
        statuses = [(await client.request("tools/list")).status for _ in range(4)]
    # 2025: the client's answer is POSTed as a JSON-RPC response, never
    # counted; 2026: it comes back in a retry of the call, a request of its own
    assert before.count("tools/call") == (2 if version == "2026-07-28" else 1)
    left = 4 - len(before)
    assert statuses == [200] * left + [429] * (4 - left)


async def test_a_method_concurrency_cap_refuses_while_one_runs():
    GATE_OPEN.clear()
    app = create_app(
        TOOLS=[Hold], RATE_LIMITS=[{"method": "tools/call", "concurrency": 1}]
    )
    async with Client(app) as client:
        running = asyncio.create_task(client.call("hold"))
        for _ in range(200):
            await asyncio.sleep(0.01)
            second = await client.request("tools/call", {"name": "hold"})
            if second.status == 429:
                break
        assert _assert_429(second, most_ms=1000) == 1000
        assert second.headers["Retry-After"] == "1"
        # other methods pass while the call runs
        assert (await client.request("tools/list")).status == 200
        GATE_OPEN.set()
        assert (await running).value == "released"
        assert (await client.call("hold")).value == "released"


async def test_method_rules_come_first_then_the_tool_rules():
    app = create_app(
        TOOLS=[Jobs],
        RATE_LIMITS=[
            {"method": "tools/call", "rate": "3/h", "burst": 3},
            {"tool": "jobs", "action": "run", "rate": "1/h"},
        ],
    )
    async with Client(app) as client:
        ok = await client.call("jobs", "run", {"size": 1})
        tool_refused = await client.call("jobs", "run", {"size": 1})
        other = await client.call("jobs", "pick", {"id": 1})
        request_refused = await client.request(
            "tools/call",
            {"name": "jobs", "arguments": {"action": "pick", "data": {"id": 1}}},
        )
    assert ok.value == {"size": 1}
    # admitted as a request (spent), refused as a call: a tool result
    assert tool_refused.status == 200
    assert json.loads(tool_refused.text)["error"] == "rate_limited"
    assert not other.is_error
    _assert_429(request_refused, most_ms=1_200_000)


async def test_a_refusal_before_dispatch_is_counted_in_the_metrics():
    app = create_app(
        TOOLS=[Jobs],
        METRICS=True,
        RATE_LIMITS=[{"method": "tools/list", "rate": "1/h"}],
    )
    async with Client(app) as client:
        for _ in range(4):
            await client.request("tools/list")
        async with client.http.get("/metrics") as response:
            text = await response.text()
    found = {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
    requests = "wymcp_requests_total"
    labels = {"method": "tools/list", "revision": "2026-07-28"}
    assert found[requests, frozenset((labels | {"outcome": "ok"}).items())] == 1
    limited = frozenset((labels | {"outcome": "rate_limited"}).items())
    assert found[requests, limited] == 3
    errors = frozenset({"status": "429", "reason": "rate_limited"}.items())
    assert found["wymcp_http_errors_total", errors] == 3


@pytest.mark.parametrize(
    ("rule", "says"),
    [
        ({"method": "tools/run", "rate": "1/s"}, "`method` must be one of"),
        ({"method": "initialize", "rate": "1/s"}, "`method` must be one of"),
        ({"method": ["*"], "rate": "1/s"}, "`method` must be one of"),
        ({"method": "*", "tool": "jobs", "rate": "1/s"}, "not both"),
        ({"method": "tasks/get"}, "needs a `rate`, a `concurrency` cap, or both"),
    ],
)
def test_wymcp_check_names_a_bad_method_rule_e012(rule: object, says: str):
    with pytest.raises(ImproperlyConfigured) as caught:
        load_settings(None, RATE_LIMITS=[{"rate": "1/s"}, rule])
    (problem,) = caught.value.problems
    assert problem.id == "wymcp.E012"
    assert problem.message.startswith("RATE_LIMITS[1]: ")
    assert says in problem.message


def test_method_rules_load_with_their_own_keys():
    settings = load_settings(
        None,
        RATE_LIMITS=[
            {"method": "*", "rate": "100/s", "burst": 50},
            {"method": "tasks/get", "rate": "5/s"},
            {"rate": "100/s", "burst": 50},
        ],
    )
    star, tasks, calls = settings.RATE_LIMITS
    assert star == RateRule(method="*", count=100, period=1.0, burst=50)
    assert tasks == RateRule(method="tasks/get", count=5, period=1.0)
    # a method rule never shares its state with the tool rule of the same rate
    assert isinstance(star, RateRule)
    assert isinstance(calls, RateRule)
    assert star.tag != calls.tag
