"""METRICS with BROKER: Redis round trips, their errors and latency; tasks in Redis.

Every round trip passes one place, `ProbedRedis`: the tests count what it
saw against the commands sent, then read the series an app serves, with
prometheus_client's parser, as Prometheus would.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest
import redis.asyncio as aioredis
from prometheus_client.parser import text_string_to_metric_families

from ops_tools import Jobs
from redis_server import free_port
from task_wire import create, send, until
from wymcp.broker.redis._probe import (
    OPERATIONS,
    REASONS,
    STORES,
    ProbedRedis,
    operation_of,
)
from wymcp.core.schema import Tool
from wymcp.testing import Client
from wymcp.transport.aiohttp import _metrics, create_app

SECRET = "s" * 32
Seen = list[tuple[str, str, str | None]]


def _observer(seen: Seen) -> Any:
    def observe(store: str, operation: str, seconds: float, reason: str | None) -> None:
        assert 0 <= seconds < 5
        seen.append((store, operation, reason))

    return observe


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def _scrape(
    client: Client,
) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    async with client.http.get("/metrics") as response:
        assert response.status == 200
        return _samples(await response.text())


async def _scrape_counted(
    client: Client, **states: int
) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """A scrape once the probe's count (no scrape counts) says `states`."""
    for _ in range(60):
        found = await _scrape(client)
        if all(
            found.get(("wymcp_broker_tasks", frozenset({"state": s}.items()))) == n
            for s, n in states.items()
        ):
            return found
        await asyncio.sleep(0.25)
    return found


async def test_each_round_trip_is_seen_once_with_its_family(redis_url: str):
    client = ProbedRedis.from_url(redis_url)
    seen: Seen = []
    client.store, client.observer = "sessions", _observer(seen)
    script = client.register_script("return 1")
    try:
        await client.set("wymcp:test:probe", "1", px=10_000)
        await client.get("wymcp:test:probe")
        async with client.pipeline(transaction=False) as pipe:
            pipe.get("wymcp:test:probe").pttl("wymcp:test:probe").delete("x")
            await pipe.execute()
        await script(keys=[], args=[])
        await client.ping()
        await client.execute_command("OBJECT", "FREQ", "wymcp:test:probe")
    except aioredis.ResponseError:
        pass  # OBJECT FREQ needs an LFU policy: a failed round trip, seen too
    finally:
        await client.aclose()
    assert seen[:4] == [
        ("sessions", "write", None),
        ("sessions", "read", None),
        ("sessions", "pipeline", None),  # three commands, one round trip
        # a script not yet loaded: NOSCRIPT, then loaded, then run
        ("sessions", "script", "no_script"),
    ]
    assert seen[4:7] == [
        ("sessions", "script_load", None),
        ("sessions", "script", None),
        ("sessions", "ping", None),
    ]
    assert seen[7] in {("sessions", "other", None), ("sessions", "other", "response")}
    assert len(seen) == 8


async def test_a_failed_round_trip_says_why():
    down = ProbedRedis.from_url(
        f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=1
    )
    seen: Seen = []
    down.store, down.observer = "rates", _observer(seen)
    with pytest.raises(aioredis.ConnectionError):
        await down.get("k")
    await down.aclose()
    assert seen == [("rates", "read", "connection")]


def test_the_vocabularies_are_fixed():
    assert operation_of("evalsha") == "script"
    assert operation_of(b"HGETALL") == "read"
    assert operation_of("FLUSHALL") == "other"
    assert operation_of("x" * 10_000) == "other"
    assert operation_of(None) == "other"
    assert len(OPERATIONS) == 8
    assert len(REASONS) == 9
    assert STORES == ("sessions", "tasks", "rates")


class Quick(Tool):
    name = "quick"
    description = "Ends at once, as a task."
    task_support = "required"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return "done"


class Waiting(Tool):
    name = "waiting"
    description = "Waits until cancelled, as a task."
    task_support = "required"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        await asyncio.Event().wait()
        return None


@pytest.fixture
async def db(redis_url: str) -> str:
    """Database 4, emptied, and no script cached: the task counts are over the
    whole store, and the first rate decision must meet NOSCRIPT whichever test
    loaded the script into this server before."""
    url = redis_url.rsplit("/", 1)[0] + "/4"
    client = aioredis.Redis.from_url(url)
    try:
        await client.flushdb()
        await client.script_flush()
    finally:
        await client.aclose()
    return url


async def test_an_app_serves_the_broker_series(
    db: str, monkeypatch: pytest.MonkeyPatch
):
    # the probe counts the broker's tasks every LIVE_TICKS lag probes (5 s);
    # every 2 (1 s) the test waits a second, not five, for each count it reads
    monkeypatch.setattr(_metrics, "LIVE_TICKS", 2)
    app = create_app(
        TOOLS=[Jobs, Quick, Waiting],
        BROKER=db,
        STATE_SECRETS=[SECRET],
        METRICS=True,
        RATE_LIMITS=[{"tool": "jobs", "rate": "100/s", "burst": 100}],
    )
    async with Client(app, protocol_version="2025-11-25") as client:
        for _ in range(3):
            assert (await client.call("jobs", "run", {"size": 1})).value == {"size": 1}
        ended = await create(client.http, "/mcp", "quick", {})
        running = await create(client.http, "/mcp", "waiting", {})
        await until(client.http, "/mcp", ended, {"completed"})
        found = await _scrape_counted(client, running=1, ended=1)
        await send(client.http, "/mcp", "tasks/cancel", {"taskId": running})
        after = await _scrape_counted(client, running=0, ended=2)
    trips = "wymcp_broker_round_trip_seconds_count"
    by_store: dict[str, float] = {}
    for (name, labels), value in found.items():
        if name == trips:
            label = dict(labels)
            assert label["store"] in STORES
            assert label["operation"] in OPERATIONS
            by_store[label["store"]] = by_store.get(label["store"], 0) + value
    # the 2025 session lives in Redis; three calls, each one rate decision
    assert by_store["sessions"] >= 3
    rates = frozenset({"store": "rates", "operation": "script"}.items())
    # three decisions; the first met NOSCRIPT (one more round trip, an error)
    # and loaded the script
    assert found[trips, rates] == 4
    load = frozenset({"store": "rates", "operation": "script_load"}.items())
    assert found[trips, load] == 1
    assert (
        found[
            "wymcp_broker_errors_total",
            frozenset(
                {"store": "rates", "operation": "script", "reason": "no_script"}.items()
            ),
        ]
        == 1
    )
    assert by_store["tasks"] >= 2
    # every worker's tasks, counted in Redis
    assert found["wymcp_broker_tasks", frozenset({"state": "running"}.items())] == 1
    assert found["wymcp_broker_tasks", frozenset({"state": "ended"}.items())] == 1
    assert after["wymcp_broker_tasks", frozenset({"state": "running"}.items())] == 0
    assert after["wymcp_broker_tasks", frozenset({"state": "ended"}.items())] == 2
    # no other error: each store's first run of each script, at most
    reasons = {
        dict(labels)["reason"]
        for name, labels in found
        if name == "wymcp_broker_errors_total"
    }
    assert reasons == {"no_script"}


async def test_an_unreachable_broker_counts_errors_by_reason():
    app = create_app(
        TOOLS=[Jobs],
        BROKER=f"redis://127.0.0.1:{free_port()}/0",
        STATE_SECRETS=[SECRET],
        METRICS=True,
        RATE_LIMITS=[{"tool": "jobs", "rate": "100/s", "burst": 100}],
    )
    async with Client(app, protocol_version="2026-07-28") as client:
        for _ in range(2):
            # decided by this worker's own limits ("open"), answered
            assert (await client.call("jobs", "run", {"size": 1})).value == {"size": 1}
        found = await _scrape(client)
    errors = {
        dict(labels)["reason"]: value
        for (name, labels), value in found.items()
        if name == "wymcp_broker_errors_total"
        and dict(labels)["store"] == "rates"
        and dict(labels)["operation"] == "script"
    }
    assert errors == {"connection": 2}
