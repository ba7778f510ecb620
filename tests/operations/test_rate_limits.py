"""RATE_LIMITS in one process: exact rates, concurrency caps, the refusal, the bound.

The refusals are read on the wire (the tool refusal the model sees) and in
`/metrics` (outcome `rate_limited`, parsed with prometheus_client's parser).
"""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ops_tools import Jobs
from wymcp.conf import ImproperlyConfigured, load_settings
from wymcp.core.schema import Tool
from wymcp.core.server import (
    CallRecord,
    CallRefused,
    LocalRates,
    RateCheck,
    RateLimiter,
    RateRule,
)
from wymcp.core.server._local_rates import MAX_KEYS
from wymcp.testing import Client
from wymcp.transport.aiohttp import create_app

GATE_OPEN = asyncio.Event()


class Hold(Tool):
    """Waits until the test opens the gate (a call that stays running)."""

    name = "hold"
    description = "Hold until released."
    input_schema = {"type": "object", "properties": {}}  # noqa: RUF012 - the pinned declaration style

    async def run(self, arguments: dict[str, Any], ctx: Any) -> str:
        await GATE_OPEN.wait()
        return "released"


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_n_calls_pass_and_the_next_is_refused_with_retry_after(version: str):
    app = create_app(
        TOOLS=[Jobs], RATE_LIMITS=[{"tool": "jobs", "rate": "3/min", "burst": 3}]
    )
    async with Client(app, protocol_version=version) as client:
        passed = [await client.call("jobs", "run", {"size": 1}) for _ in range(3)]
        refused = await client.call("jobs", "run", {"size": 1})
    assert [r.value for r in passed] == [{"size": 1}] * 3
    assert refused.status == 200
    assert refused.is_error
    payload = json.loads(refused.text)
    retry = payload.pop("retry_after_ms")
    # 3 per minute: the 4th may come 20 s after the first (less the time spent)
    assert 15_000 < retry <= 20_000
    assert payload == {
        "error": "rate_limited",
        "message": f"Too many calls: wait {retry} ms, then call again.",
        "tool": "jobs",
        "action": "run",
        "help": 'help {tool: "jobs", action: "run"}',
    }


async def test_help_and_other_tools_and_actions_are_not_counted():
    app = create_app(
        TOOLS=[Jobs, Hold],
        RATE_LIMITS=[{"tool": "jobs", "action": "run", "rate": "1/h"}],
    )
    async with Client(app) as client:
        for _ in range(5):
            helped = await client.call("help", arguments={"tool": "jobs"})
            assert not helped.is_error, helped.text
        assert not (await client.call("jobs", "run", {"size": 1})).is_error
        again = await client.call("jobs", "run", {"size": 1})
        other = await client.call("jobs", "pick", {"id": 1})
    assert json.loads(again.text)["error"] == "rate_limited"
    assert not other.is_error


async def test_a_rule_for_every_call_counts_every_tool():
    app = create_app(TOOLS=[Jobs, Hold], RATE_LIMITS=[{"rate": "2/h", "burst": 2}])
    async with Client(app) as client:
        first = await client.call("jobs", "run", {"size": 1})
        second = await client.call("jobs", "pick", {"id": 1})
        third = await client.call("jobs", "run", {"size": 1})
    assert not first.is_error
    assert not second.is_error
    assert json.loads(third.text)["error"] == "rate_limited"


async def test_the_concurrency_cap_refuses_while_a_call_runs_and_frees_after():
    GATE_OPEN.clear()
    app = create_app(TOOLS=[Hold], RATE_LIMITS=[{"tool": "hold", "concurrency": 1}])
    async with Client(app) as client:
        running = asyncio.create_task(client.call("hold"))
        for _ in range(200):
            await asyncio.sleep(0.01)
            second = await client.call("hold")
            if second.is_error:
                break
        assert json.loads(second.text)["error"] == "rate_limited"
        assert json.loads(second.text)["retry_after_ms"] == 1000
        GATE_OPEN.set()
        assert (await running).value == "released"
        assert (await client.call("hold")).value == "released"


async def test_a_limited_call_counts_as_rate_limited_in_the_metrics():
    app = create_app(
        TOOLS=[Jobs], METRICS=True, RATE_LIMITS=[{"tool": "jobs", "rate": "2/h"}]
    )
    async with Client(app) as client:
        for _ in range(5):
            await client.call("jobs", "run", {"size": 1})
        async with client.http.get("/metrics") as response:
            text = await response.text()
    found = {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
    labels = {"tool": "jobs", "action": "run"}
    calls = "wymcp_tool_calls_total"
    assert found[calls, frozenset((labels | {"outcome": "ok"}).items())] == 1
    assert found[calls, frozenset((labels | {"outcome": "rate_limited"}).items())] == 4
    gate = frozenset((labels | {"gate": "rate_limited"}).items())
    assert found["wymcp_tool_refusals_total", gate] == 4


@pytest.mark.parametrize(
    ("rule", "says"),
    [
        ({"rate": "ten per second"}, "`rate` must read"),
        ({"rate": "0/s"}, "`rate` must read"),
        ({"rate": "5/s", "burst": 0}, "`burst` must be a whole number"),
        ({"burst": 3}, "`burst` needs a `rate`"),
        ({"action": "run", "rate": "1/s"}, "`action` needs the `tool`"),
        ({"tool": "jobs"}, "needs a `rate`, a `concurrency` cap, or both"),
        ({"rate": "1/s", "per": "ip"}, "unknown key(s) ['per']"),
        ({"concurrency": True}, "`concurrency` must be a whole number"),
        ("10/s", "a rule must be a dict"),
    ],
)
def test_wymcp_check_names_a_bad_rule_e012(rule: object, says: str):
    with pytest.raises(ImproperlyConfigured) as caught:
        load_settings(None, RATE_LIMITS=[{"rate": "1/s"}, rule])
    (problem,) = caught.value.problems
    assert problem.id == "wymcp.E012"
    assert problem.message.startswith("RATE_LIMITS[1]: ")
    assert says in problem.message


def test_good_rules_load_as_rate_rules():
    settings = load_settings(
        None,
        RATE_LIMITS=[
            {"rate": "600/min", "burst": 20},
            {"tool": "jobs", "action": "run", "rate": "5/s", "concurrency": 2},
        ],
        RATE_LIMIT_ON_REDIS_ERROR="closed",
    )
    assert (
        RateRule(count=600, period=60.0, burst=20),
        RateRule(tool="jobs", action="run", count=5, period=1.0, concurrency=2),
    ) == settings.RATE_LIMITS
    with pytest.raises(ImproperlyConfigured) as caught:
        load_settings(None, RATE_LIMIT_ON_REDIS_ERROR="maybe")
    assert caught.value.problems[0].id == "wymcp.E004"


async def _drive(limiter: RateLimiter, first: int, count: int, *, subject: bool):
    async def ok() -> dict[str, Any]:
        return {}

    for n in range(first, first + count):
        record = CallRecord(method="tools/call", tool="jobs", known_tool=True)
        if subject:
            record.principal = {"sub": f"user-{n}"}
        else:
            record.peer = f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}"
        await limiter(record, ok)


@pytest.mark.parametrize("subject", [False, True])
async def test_distinct_principals_keep_at_most_max_keys_states(subject: bool):
    store = LocalRates()
    limiter = RateLimiter([RateRule(count=1, period=60.0)], store)
    gc.collect()
    tracemalloc.start()
    try:
        empty = tracemalloc.get_traced_memory()[0]
        await _drive(limiter, 0, MAX_KEYS, subject=subject)  # the table is full
        gc.collect()
        full = tracemalloc.get_traced_memory()[0]
        await _drive(limiter, MAX_KEYS, MAX_KEYS, subject=subject)
        gc.collect()
        once = tracemalloc.get_traced_memory()[0]
        await _drive(limiter, 2 * MAX_KEYS, 2 * MAX_KEYS, subject=subject)
        gc.collect()
        twice = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(store) == MAX_KEYS
    # the stated bound: 256 bytes per (rule, principal) key, churn included
    # (measured here: 178 full, 212 after the LRU's first turnover)
    assert full - empty < 256 * MAX_KEYS
    assert once - empty < 256 * MAX_KEYS
    # doubling the distinct principals past the bound grows nothing
    assert twice - once < 64 * 1024


def test_the_lru_forgets_the_oldest_principal_first():
    now = [0.0]
    store = LocalRates(max_keys=2, clock=lambda: now[0])
    limiter = RateLimiter([RateRule(count=1, period=60.0)], store)

    async def ok() -> dict[str, Any]:
        return {}

    async def call(peer: str) -> bool:
        record = CallRecord(method="tools/call", tool="t", peer=peer)
        try:
            await limiter(record, ok)
        except Exception:  # noqa: BLE001 - CallRefused: refused
            return False
        return True

    async def script() -> list[bool]:
        return [
            await call("a"),
            await call("b"),
            await call("a"),  # still limited (a refusal spends nothing)
            await call("c"),  # evicts a, the least recently admitted
            await call("a"),  # a forgotten: a fresh bucket (evicts b)
            await call("c"),  # c still limited
        ]

    assert asyncio.run(script()) == [True, True, False, True, True, False]


@pytest.mark.parametrize("now", [7856.003, 7856.004, 12.5, 1e6 + 0.1])
def test_a_fresh_principal_is_admitted_whatever_the_clock_reads(now):
    # (now + 3600) - now - 3600 is above 0 for about a quarter of clock values:
    # the first call of a 1/h rule was refused depending on the machine's uptime
    store = LocalRates(clock=lambda: now)
    check = RateCheck(RateRule(count=1, period=3600.0), "fresh")
    assert store.decide([check]) is None
    assert store.decide([check]) == pytest.approx(3600.0)


async def test_ipv6_clients_count_by_their_64_as_the_tasks_do():
    store = LocalRates()
    limiter = RateLimiter([RateRule(count=1, period=3600.0)], store)

    async def call(peer: str) -> str:
        record = CallRecord(method="tools/call", tool="jobs", action="run", peer=peer)

        async def ok() -> dict[str, Any]:
            return {"content": []}

        try:
            await limiter(record, ok)
        except CallRefused as refused:
            return refused.code
        return "ok"

    # one host rotating through its /64: one call, then every address refused
    rotated = [await call(f"2001:db8:1:2::{n:x}") for n in range(1, 1001)]
    assert rotated[0] == "ok"
    assert set(rotated[1:]) == {"rate_limited"}
    assert len(store) == 1
    # another /64, an IPv4 client and an IPv4-mapped one are others
    assert await call("2001:db8:1:3::1") == "ok"
    assert await call("192.0.2.1") == "ok"
    assert await call("::ffff:192.0.2.2") == "ok"
