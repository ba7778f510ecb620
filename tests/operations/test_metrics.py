"""METRICS: exact counters for a scripted mix of calls, bounded series, the guard.

Every value is read back with prometheus_client's own parser from the text the
endpoint serves, as a Prometheus server would read it.
"""

from __future__ import annotations

import asyncio
import random
import string
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from ops_tools import Jobs
from wymcp.testing import Client
from wymcp.transport.aiohttp import create_app

TOKEN = "m" * 40


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a scrape, by name and label set."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[sample.name, frozenset(sample.labels.items())] = sample.value
    return found


def value(found: dict[Any, float], name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


async def scrape(client: Client, **headers: str) -> str:
    async with client.http.get("/metrics", headers=headers) as response:
        assert response.status == 200, await response.text()
        return await response.text()


async def test_a_scripted_mix_of_calls_counts_exactly(loop_watchdog):
    app = create_app(TOOLS=[Jobs], METRICS=True, CALL_TIMEOUT=0.3)
    async with Client(app) as client:
        for _ in range(3):
            assert not (await client.call("jobs", "run", {"size": 1})).is_error
        for _ in range(2):
            assert (await client.call("jobs", "run", {"size": 99})).is_error
        assert (await client.call("jobs", "run", {"size": 1, "bogus": 1})).is_error
        assert (await client.call("jobs", "run", {})).is_error
        assert (await client.call("jobs", "pick", {})).is_error
        assert (await client.call("jobs", "nope", {})).is_error
        assert (
            await client.call(
                "jobs", arguments={"action": "run", "data": {}, "extra": 1}
            )
        ).is_error
        assert (await client.call("jobs", "fail")).is_error
        assert (await client.call("jobs", "crash")).is_error
        assert (await client.call("jobs", "sleep")).is_error
        unknown = await client.call("no-such-tool", "run")
        assert unknown.error is not None
        found = samples(await scrape(client))

    calls = "wymcp_tool_calls_total"
    expected = {
        ("jobs", "run", "ok"): 3,
        ("jobs", "run", "invalid_values"): 2,
        ("jobs", "run", "unknown_params"): 1,
        ("jobs", "run", "missing_required_fields"): 1,
        ("jobs", "pick", "missing_required_group"): 1,
        ("jobs", "unknown", "unknown_action"): 1,
        ("jobs", "run", "invalid_arguments"): 1,
        ("jobs", "fail", "tool_error"): 1,
        ("jobs", "crash", "tool_raised"): 1,
        ("jobs", "sleep", "call_timeout"): 1,
        ("unknown", "unknown", "unknown_tool"): 1,
    }
    got = {
        (dict(labels)["tool"], dict(labels)["action"], dict(labels)["outcome"]): v
        for (name, labels), v in found.items()
        if name == calls
    }
    assert got == expected
    refusals = {
        (dict(labels)["tool"], dict(labels)["action"], dict(labels)["gate"]): v
        for (name, labels), v in found.items()
        if name == "wymcp_tool_refusals_total"
    }
    assert refusals == {
        ("jobs", "run", "invalid_values"): 2,
        ("jobs", "run", "unknown_params"): 1,
        ("jobs", "run", "missing_required_fields"): 1,
        ("jobs", "pick", "missing_required_group"): 1,
        ("jobs", "unknown", "unknown_action"): 1,
        ("jobs", "run", "invalid_arguments"): 1,
    }
    # requests by method, revision and outcome: the client listed the tools once
    assert (
        value(
            found,
            "wymcp_requests_total",
            method="tools/list",
            revision="2026-07-28",
            outcome="ok",
        )
        == 1
    )
    assert (
        value(
            found,
            "wymcp_requests_total",
            method="tools/call",
            revision="2026-07-28",
            outcome="ok",
        )
        == 3
    )
    # the unknown tool is -32602: its status (400 at 2026-07-28) is counted by reason
    assert (
        value(found, "wymcp_http_errors_total", status="400", reason="bad_request") == 1
    )
    # every request has its duration, in the OpenTelemetry histogram
    count = sum(
        v
        for (name, _), v in found.items()
        if name == "mcp_server_operation_duration_seconds_count"
    )
    assert count == 15
    assert (
        value(
            found,
            "mcp_server_operation_duration_seconds_count",
            mcp_method_name="tools/call",
            mcp_protocol_version="2026-07-28",
            gen_ai_tool_name="jobs",
            error_type="call_timeout",
        )
        == 1
    )
    assert value(found, "wymcp_request_body_bytes_total") > 0


async def test_live_sessions_and_streams_are_gauges():
    app = create_app(TOOLS=[Jobs], METRICS=True)
    async with Client(app, protocol_version="2025-11-25") as client:
        found = samples(await scrape(client))
    assert value(found, "wymcp_sessions") == 1
    assert value(found, "wymcp_streams") == 0
    assert value(found, "wymcp_tasks", state="working") == 0


def _name(rng: random.Random) -> str:
    return "".join(
        rng.choices(string.ascii_letters + "\r\n\x1b[", k=rng.randint(1, 60))
    )


async def test_random_unknown_names_add_no_series(loop_watchdog):
    """10,000 calls with random tool, action and method names: a fixed set of series."""
    rng = random.Random(27)  # noqa: S311 - repeatable names, not secrets
    app = create_app(TOOLS=[Jobs], METRICS=True)
    async with Client(app, protocol_version="2025-11-25") as client:
        before = samples(await scrape(client))
        early: dict[Any, float] = {}
        for index in range(10_000):
            if index == 300:
                early = samples(await scrape(client))
            kind = index % 3
            if kind == 0:
                await client.request(
                    "tools/call",
                    {"name": _name(rng), "arguments": {"action": _name(rng)}},
                )
            elif kind == 1:
                await client.call("jobs", _name(rng), {})
            else:
                await client.request(_name(rng), {})
        after = samples(await scrape(client))
    new = {key for key in after if key not in before}
    labels = {value for _, label_set in new for _, value in label_set}
    # only the fixed vocabulary appears: no name a client sent
    assert labels <= {
        "unknown",
        "jobs",
        "unknown_tool",
        "unknown_action",
        "method_not_found",
        "2025-11-25",
        "tools/call",
        "none",
        "",
        "400",
        "bad_request",
        *(key[1] and dict(key[1]).get("le", "") for key in new),
    }
    # the first 300 calls reached every series unknown names can: 9,700 more
    # added none; the fixed set is 3 (method, outcome) pairs of the duration
    # histogram (18 samples each) and a few counters
    assert set(after) == set(early)
    assert len(new) <= 80
    assert (
        value(
            after,
            "wymcp_tool_calls_total",
            tool="unknown",
            action="unknown",
            outcome="unknown_tool",
        )
        == 3334
    )


async def test_the_metrics_are_guarded_by_host_and_their_token():
    app = create_app(TOOLS=[Jobs], METRICS=True, METRICS_TOKEN=TOKEN, AUTH=None)
    async with Client(app) as client:
        http = client.http
        async with http.get("/metrics") as response:
            assert response.status == 401
            assert response.headers["WWW-Authenticate"].startswith("Bearer")
        async with http.get(
            "/metrics", headers={"Authorization": "Bearer wrong"}
        ) as response:
            assert response.status == 401
        async with http.get(
            "/metrics",
            headers={"Authorization": f"Bearer {TOKEN}", "Host": "evil.example"},
        ) as response:
            assert response.status == 403
        async with http.get(
            "/metrics",
            headers={
                "Authorization": f"Bearer {TOKEN}",
                "Origin": "http://evil.example",
            },
        ) as response:
            assert response.status == 403
        text = await scrape(client, Authorization=f"Bearer {TOKEN}")
    assert "wymcp_requests_total" in text


async def test_openmetrics_is_served_when_asked():
    app = create_app(TOOLS=[Jobs], METRICS=True)
    async with (
        Client(app) as client,
        client.http.get(
            "/metrics",
            headers={"Accept": "application/openmetrics-text; version=1.0.0"},
        ) as response,
    ):
        assert response.headers["Content-Type"].startswith(
            "application/openmetrics-text"
        )
        assert (await response.text()).endswith("# EOF\n")


async def test_without_metrics_there_is_no_route():
    app = create_app(TOOLS=[Jobs])
    async with Client(app) as client, client.http.get("/metrics") as response:
        assert response.status == 404


async def test_a_call_the_client_cancels_counts_as_cancelled():
    import ops_tools

    ops_tools.SLEEPING.clear()
    app = create_app(TOOLS=[Jobs], METRICS=True)
    async with Client(app, protocol_version="2025-11-25") as client:
        call = asyncio.ensure_future(client.call("jobs", "sleep"))
        await asyncio.wait_for(ops_tools.SLEEPING.wait(), 10)
        sent_id = 2  # initialize was 1
        await client.notify(
            "notifications/cancelled", {"requestId": sent_id, "reason": "user"}
        )
        await asyncio.wait_for(call, 10)
        found = samples(await scrape(client))
    assert (
        value(
            found,
            "wymcp_tool_calls_total",
            tool="jobs",
            action="sleep",
            outcome="cancelled",
        )
        == 1
    )


def test_metrics_without_prometheus_client_is_a_check_error(monkeypatch):
    import importlib.util

    from wymcp.conf import load_settings, run_checks
    from wymcp.transport.aiohttp import CHECKS

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "prometheus_client" else real(name, *a),
    )
    (problem,) = [
        p
        for p in run_checks(load_settings(None, METRICS=True), checks=CHECKS)
        if p.id == "wymcp.E011"
    ]
    assert problem.is_error
    assert "[metrics]" in problem.hint
    plain = run_checks(load_settings(None), checks=CHECKS)
    assert not [p for p in plain if p.id == "wymcp.E011"]
    # conf alone does not know the HTTP transport's metrics
    alone = run_checks(load_settings(None, METRICS=True))
    assert not any(p.is_error for p in alone)


async def test_the_probe_measures_loop_lag_and_refreshes_the_gauges():
    from wymcp.transport.aiohttp import _metrics
    from wymcp.transport.aiohttp._setup import get_endpoint

    app = create_app(TOOLS=[Jobs], METRICS=True)
    async with Client(app, protocol_version="2025-11-25") as client:
        metrics = get_endpoint(app).metrics
        assert metrics is not None
        # no scrape: the probe alone sets the session gauge
        waited = 0.0
        while metrics.registry.get_sample_value("wymcp_sessions") != 1 and waited < 20:
            await asyncio.sleep(0.25)
            waited += 0.25
        assert metrics.registry.get_sample_value("wymcp_sessions") == 1
        found = samples(await scrape(client))
    lags = value(found, "wymcp_event_loop_lag_seconds_count")
    assert lags >= _metrics.LIVE_TICKS


async def test_a_connection_refused_at_max_connections_is_counted():
    from aiohttp import web

    from wymcp.transport.aiohttp._runner import make_runner
    from wymcp.transport.aiohttp._setup import get_endpoint

    app = create_app(TOOLS=[Jobs], METRICS=True, MAX_CONNECTIONS=1)
    runner = make_runner(app, get_endpoint(app).settings)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        _, held = await asyncio.open_connection("127.0.0.1", port)
        await asyncio.sleep(0.1)  # the server has registered the first one
        reader, extra = await asyncio.open_connection("127.0.0.1", port)
        assert (await reader.readline()).startswith(b"HTTP/1.1 503")
        extra.close()
        held.close()
        await asyncio.sleep(0.1)
        import aiohttp

        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{port}/metrics") as response,
        ):
            found = samples(await response.text())
    finally:
        await runner.cleanup()
    assert (
        value(found, "wymcp_http_errors_total", status="503", reason="max_connections")
        == 1
    )


async def test_a_session_s_duration_is_observed_when_it_ends():
    app = create_app(TOOLS=[Jobs], METRICS=True)
    async with Client(app, protocol_version="2025-11-25") as client:
        before = samples(await scrape(client))
        await client.call("jobs", "run", {"size": 1})
    # the client's DELETE ended the session; a new one reads the metrics
    async with Client(app) as reader:
        after = samples(await scrape(reader))
    name = "mcp_server_session_duration_seconds_count"
    assert value(before, name, mcp_protocol_version="2025-11-25") == 0
    assert value(after, name, mcp_protocol_version="2025-11-25") == 1
    # initialize is counted at the revision it opened
    assert (
        value(
            after,
            "wymcp_requests_total",
            method="initialize",
            revision="2025-11-25",
            outcome="ok",
        )
        == 1
    )


def test_flushed_counts_equal_observed_ones():
    """The batched counts reach the same series a direct `observe` would.

    `Metrics` adds a flush's counts to the histogram child's sum and buckets
    itself (prometheus_client has no "observe N values"): a release of the
    library that changed that layout fails here.
    """
    import prometheus_client as prom
    from prometheus_client import generate_latest

    from wymcp.conf import load_settings
    from wymcp.core.server import CallRecord
    from wymcp.transport.aiohttp._metrics import DURATION_BUCKETS, Metrics

    metrics = Metrics(load_settings(None, METRICS=True))
    reference = prom.CollectorRegistry()
    histogram = prom.Histogram(
        "mcp_server_operation_duration_seconds",
        "reference",
        ["mcp_method_name", "mcp_protocol_version", "gen_ai_tool_name", "error_type"],
        buckets=DURATION_BUCKETS,
        registry=reference,
    ).labels("tools/call", "2026-07-28", "jobs", "")
    # every bucket, each bound itself (`le` is inclusive), and past the last
    durations = [0.0, *DURATION_BUCKETS, *(b * 1.5 for b in DURATION_BUCKETS)]
    for round_ in range(2):  # two flushes: the second adds to the first
        for seconds in durations:
            record = CallRecord(
                method="tools/call",
                revision="2026-07-28",
                tool="jobs",
                action="run",
                known_tool=True,
                known_action=True,
            )
            metrics.observe(record, 200, seconds, 10 + round_)
            histogram.observe(seconds)
        metrics.flush()
    ours = samples(generate_latest(metrics.registry).decode())
    theirs = samples(generate_latest(reference).decode())
    name = "mcp_server_operation_duration_seconds"
    kept = (name + "_bucket", name + "_count", name + "_sum")
    compared = {k: v for k, v in ours.items() if k[0] in kept}
    expected = {k: v for k, v in theirs.items() if k[0] in kept}
    assert len(compared) == len(DURATION_BUCKETS) + 3  # +Inf, count, sum
    assert compared.keys() == expected.keys()
    for key, got in compared.items():
        assert abs(got - expected[key]) < 1e-9, key
    labels = {
        "mcp_method_name": "tools/call",
        "mcp_protocol_version": "2026-07-28",
        "gen_ai_tool_name": "jobs",
        "error_type": "",
    }
    assert value(ours, name + "_count", **labels) == 2 * len(durations)
    calls = value(
        ours, "wymcp_tool_calls_total", tool="jobs", action="run", outcome="ok"
    )
    assert calls == 2 * len(durations)
    assert value(ours, "wymcp_request_body_bytes_total") == len(durations) * 21


def test_what_waits_for_a_flush_is_one_entry_per_label_set():
    from wymcp.conf import load_settings
    from wymcp.core.server import CallRecord
    from wymcp.transport.aiohttp._metrics import Metrics

    metrics = Metrics(load_settings(None, METRICS=True))
    for index in range(20_000):
        record = CallRecord(
            method="tools/call",
            revision="2026-07-28",
            tool="jobs",
            action=("run", "pick")[index % 2],
            known_tool=True,
            known_action=True,
        )
        metrics.observe(record, 200, 0.001, 100)
        metrics.broker_round_trip("tasks", ("read", "script")[index % 2], 0.001, None)
    # two request label sets and two round-trip label sets, however many
    assert len(metrics._pending) == 4
    metrics.flush()
    assert metrics._pending == []
    text = generate_latest_text(metrics)
    found = samples(text)
    trips = "wymcp_broker_round_trip_seconds_count"
    assert value(found, trips, store="tasks", operation="read") == 10_000
    assert value(found, trips, store="tasks", operation="script") == 10_000


def _records() -> list[Any]:
    """Records the labels are worked out differently for, in pairs that differ
    in one field alone (so a shortcut missing it would mix them up)."""
    from wymcp.core.server import CallRecord

    call = {"method": "tools/call", "revision": "2026-07-28"}
    run = {**call, "tool": "jobs", "action": "run", "known_tool": True}
    house = {**run, "known_action": True, "outcome": "house_rule"}
    return [
        CallRecord(**run, known_action=True),
        CallRecord(**run),  # the action unknown
        CallRecord(**call, tool="jobs", known_tool=True),
        CallRecord(**call, tool="jobs"),  # the tool unknown
        CallRecord(**call, tool="nope", action="run", outcome="unknown_tool"),
        CallRecord(**run, known_action=True, outcome="invalid_values", refused=True),
        CallRecord(**house, refused=True),  # a middleware's refusal
        CallRecord(**house),  # a middleware's code, not a refusal
        CallRecord(method="tools/list", revision="2025-11-25", outcome="odd_code"),
        CallRecord(method="made/up", revision="2025-11-25"),
        CallRecord(method="ping"),
        CallRecord(),
    ]


_COUNTED = {
    "wymcp_requests_total",
    "wymcp_tool_calls_total",
    "wymcp_tool_refusals_total",
    "mcp_server_operation_duration_seconds_count",
}


def _request_counts(metrics: Any) -> dict[Any, float]:
    """The counts a record adds, by series (each label set it reaches)."""
    metrics.flush()
    found = samples(generate_latest_text(metrics))
    return {key: count for key, count in found.items() if key[0] in _COUNTED and count}


def test_a_record_is_counted_under_the_same_labels_every_time():
    """The shortcut from a record's fields (`_by_fields`) finds the series its
    labels name: records observed together, twice, count as each alone."""
    from wymcp.conf import load_settings
    from wymcp.transport.aiohttp._metrics import Metrics

    expected: dict[Any, float] = {}
    signatures = set()
    for record in _records():
        alone = Metrics(load_settings(None, METRICS=True))
        alone.observe(record, 200, 0.001, 0)
        counts = _request_counts(alone)
        signatures.add(frozenset(counts))
        for key, count in counts.items():
            expected[key] = expected.get(key, 0.0) + 2 * count
    assert len(signatures) == len(_records())  # each record its own series
    together = Metrics(load_settings(None, METRICS=True))
    for _ in range(2):  # the second time, through the shortcut
        for record in _records():
            together.observe(record, 200, 0.001, 0)
    assert _request_counts(together) == expected


def test_made_up_names_keep_no_shortcut():
    """Records naming tools, actions and methods a client made up keep nothing
    new: twice as many of them hold no more memory (the shortcut keeps only
    records whose names are the catalogue's and the vocabularies')."""
    import tracemalloc

    from wymcp.conf import load_settings
    from wymcp.core.server import CallRecord
    from wymcp.transport.aiohttp._metrics import Metrics

    metrics = Metrics(load_settings(None, METRICS=True))
    rng = random.Random(27)  # noqa: S311 - repeatable names, not secrets

    def observe(count: int) -> int:
        tracemalloc.start()
        try:
            for _ in range(count):
                record = CallRecord(
                    method=rng.choice(["tools/call", _name(rng)]),
                    revision="2026-07-28",
                    tool=_name(rng),
                    action=_name(rng),
                )
                metrics.observe(record, 200, 0.001, 0)
            metrics.flush()
            return tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()

    observe(200)  # the few series made up names reach
    held = [observe(2_000), observe(4_000)]
    assert held[0] < 16_384, held
    assert held[1] < 16_384, held


def generate_latest_text(metrics: Any) -> str:
    from prometheus_client import generate_latest

    return generate_latest(metrics.registry).decode()


async def test_a_503_says_which_limit_answered_it():
    import json as json_module

    from task_wire import create, send
    from wymcp.core.schema import Tool

    class Waiting(Tool):
        name = "waiting"
        description = "Waits until cancelled, as a task."
        task_support = "required"
        input_schema = {"type": "object", "properties": {}}  # noqa: RUF012 - a tool's declaration

        async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
            await asyncio.Event().wait()

    app = create_app(TOOLS=[Jobs, Waiting], METRICS=True, MAX_SESSIONS=1, MAX_TASKS=1)
    async with Client(app, protocol_version="2025-11-25") as client:
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "second", "version": "1"},
            },
        }
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        async with client.http.post(
            "/mcp", data=json_module.dumps(initialize), headers=headers
        ) as response:
            assert response.status == 503  # the one session is the client's
        running = await create(client.http, "/mcp", "waiting", {})
        status, _, _ = await send(
            client.http, "/mcp", "tools/call", {"name": "waiting"}
        )
        assert status == 503
        found = samples(await scrape(client))
        await send(client.http, "/mcp", "tasks/cancel", {"taskId": running})
    errors = "wymcp_http_errors_total"
    assert value(found, errors, status="503", reason="max_sessions") == 1
    assert value(found, errors, status="503", reason="max_tasks") == 1
    assert value(found, errors, status="503", reason="unavailable") == 0


async def test_a_stream_refused_at_its_cap_names_the_cap_in_the_record():
    from wymcp.core.server import CallRecord, Exchange, Headers, Reply
    from wymcp.core.server._stream_cap import LongStreams

    streams = LongStreams(total=1, per_client=1, retry_after=1, wall_clock=lambda: 0)
    held = asyncio.Event()
    release = asyncio.Event()

    async def serve(exchange: Any, stream: Any) -> Reply:
        held.set()
        await release.wait()
        return Reply(200)

    def exchange() -> Exchange:
        return Exchange(
            "GET", Headers({}), None, None, peer="10.0.0.1", record=CallRecord()
        )

    first = exchange()
    running = asyncio.create_task(streams.hold(first, None, serve))
    await held.wait()
    second = exchange()
    refused = await streams.hold(second, None, serve)
    release.set()
    assert (await running).status == 200
    assert refused.status == 503
    assert second.record is not None
    assert second.record.reason == "max_streams"
    assert first.record is not None
    assert first.record.reason is None


async def test_a_body_refused_unread_adds_only_the_bytes_that_came():
    """A 413 on a declared length alone counts no body bytes (issue 27 LOW 9).

    The client chooses `Content-Length`: counting it would let one request
    push the counter to 1e18, where a float counter loses real bodies.
    """
    import aiohttp
    from aiohttp import web

    from wymcp.transport.aiohttp._runner import make_runner
    from wymcp.transport.aiohttp._setup import get_endpoint

    app = create_app(TOOLS=[Jobs], METRICS=True)
    runner = make_runner(app, get_endpoint(app).settings)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        sent = b"{}"  # two bytes of a body declared 10**18 long
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\n"
            b"Content-Length: " + str(10**18).encode() + b"\r\n\r\n" + sent
        )
        await writer.drain()
        status = await reader.readline()
        writer.close()
        await asyncio.sleep(0.1)  # the server has counted the request
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{port}/metrics") as response,
        ):
            found = samples(await response.text())
    finally:
        await runner.cleanup()
    assert status.startswith(b"HTTP/1.1 413"), status
    assert (
        value(found, "wymcp_http_errors_total", status="413", reason="body_too_large")
        == 1
    )
    assert value(found, "wymcp_request_body_bytes_total") <= len(sent)
