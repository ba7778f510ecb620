"""Prometheus metrics of one endpoint (`METRICS`), read from each request's record.

Label values come from the catalogue or fixed vocabularies, never the request.
With `PROMETHEUS_MULTIPROC_DIR` set, every worker's series are summed when
scraped (prometheus_client's multiprocess mode). Counts wait in plain integers
until a flush (a scrape, every `LAG_INTERVAL`, shutdown).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
from bisect import bisect_left
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs
from aiohttp import web

from wymcp.core.server import INVALID_REQUEST, SUPPORTED, CallRecord
from wymcp.transport.aiohttp._answers import error_response
from wymcp.transport.aiohttp._scrapes import wants_openmetrics

if TYPE_CHECKING:
    from wymcp.conf import Settings

logger = logging.getLogger("wymcp.transport.aiohttp")

UNKNOWN: Final = "unknown"
NONE: Final = "none"

METHODS: Final = frozenset(
    {
        "initialize",
        "ping",
        "server/discover",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
        "subscriptions/listen",
        "tasks/get",
        "tasks/update",
        "tasks/cancel",
        "notifications/initialized",
        "notifications/cancelled",
        "notifications/progress",
        "notifications/roots/list_changed",
        "GET",
        "DELETE",
    }
)
"""The `method` label values (JSON-RPC methods, or the HTTP method of a stream)."""

GATES: Final = frozenset(
    {
        "unknown_action",
        "unknown_params",
        "missing_required_fields",
        "missing_required_group",
        "invalid_values",
        "invalid_arguments",
        "rate_limited",
    }
)
"""The `gate` label values; any other middleware refusal counts as `middleware`."""

OUTCOMES: Final = GATES | {
    "ok",
    "middleware",
    "tool_error",
    "tool_raised",
    "call_timeout",
    "result_too_large",
    "unknown_tool",
    "input_required",
    "cancelled",
    "invalid_request",
    "method_not_found",
    "invalid_params",
    "internal_error",
    "rpc_error",
    "refused",
}
"""The `outcome` label values (`refused`: the transport answered 4xx/5xx first)."""

REASONS: Final = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    413: "body_too_large",
    415: "unsupported_media_type",
    417: "expectation_failed",
    421: "misdirected",
    429: "rate_limited",
    499: "client_closed",
    500: "internal_error",
    503: "unavailable",
}
"""The `reason` label of each 4xx/5xx status; any other status is `other`."""

LIMITS: Final = frozenset(
    {
        "max_sessions",
        "max_streams",
        "max_streams_per_client",
        "max_tasks",
        "task_memory",
        "task_store_unavailable",
    }
)
"""The `reason` of a 503 a limit answered (`CallRecord.reason`), instead of
`unavailable`."""

DURATION_BUCKETS: Final = (
    0.01,
    0.02,
    0.05,
    0.1,
    0.2,
    0.5,
    1.0,
    2.0,
    5.0,
    10.0,
    30.0,
    60.0,
    120.0,
    300.0,
)
"""The OpenTelemetry MCP semantic conventions' advised buckets (seconds)."""

BROKER_BUCKETS: Final = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
)
"""Seconds of one Redis round trip (finer than the OTel database buckets, whose
first is 1 ms: a healthy round trip takes a fraction of it)."""
BROKER_COUNT_WAIT: Final = 2.0
"""Seconds the count of the broker's tasks may take before it is skipped."""
BROKER_TASK_STATES: Final = ("running", "ended")

LAG_BUCKETS: Final = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
LAG_INTERVAL: Final = 0.5
"""Seconds between two event-loop lag probes."""
LIVE_TICKS: Final = 10
"""Lag probes between two refreshes of the gauges (every 5 s)."""

MULTIPROCESS_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"

FIELD_SETS: Final = 4096
"""Records' field sets kept as a shortcut to their series, at most (each is
one of the label sets, so fewer arrive; the bound is a second guard)."""

_Fields = tuple[str | None, str | None, str, bool, str | None, bool, str | None, bool]
"""A record's method, revision, outcome, refused, tool, known_tool, action,
known_action: what its labels are worked out from."""


@attrs.define(eq=False)
class _Series:
    """The children one label set updates, and what it counted since the flush.

    `buckets[i]` counts the durations in bucket `i` alone (`+Inf` last), as
    the histogram child keeps them.
    """

    counters: tuple[Any, ...]
    duration: Any
    bounds: tuple[float, ...] = DURATION_BUCKETS
    count: int = 0
    seconds: float = 0.0
    buckets: list[int] = attrs.Factory(
        lambda self: [0] * (len(self.bounds) + 1), takes_self=True
    )

    def add(self, seconds: float) -> None:
        """Count one more duration (until the flush)."""
        self.count += 1
        self.seconds += seconds
        self.buckets[bisect_left(self.bounds, seconds)] += 1

    def flush(self) -> None:
        """Add the pending counts to the children (on the event loop's thread)."""
        count = self.count
        for counter in self.counters:
            counter.inc(count)
        # prometheus_client has no public "observe N values" call: its child
        # keeps a sum and one count per bucket (`tests/operations/
        # test_metrics.py::test_flushed_counts_equal_observed_ones` pins it)
        duration = self.duration
        duration._sum.inc(self.seconds)  # noqa: SLF001 - no public bulk observe
        buckets = self.buckets
        for index, found in enumerate(buckets):
            if found:
                duration._buckets[index].inc(found)  # noqa: SLF001 - no public bulk observe
                buckets[index] = 0
        self.count = 0
        self.seconds = 0.0


TEXT_FORMAT: Final = "text/plain; version=0.0.4; charset=utf-8"
"""The content type of the text format `generate_latest` writes (named here: the
lowest prometheus_client allowed, 0.21, has no constant for it)."""


class Metrics:
    """The series of one endpoint and the handler that serves them.

    `prometheus_client` is imported here, so it is needed only with METRICS.
    """

    def __init__(self, settings: Settings) -> None:
        try:
            import prometheus_client as prom  # noqa: PLC0415 - the optional extra
        except ImportError:
            raise ImportError(
                "METRICS needs prometheus_client: pip install "
                '"wymcp-transport-aiohttp[metrics]" (wymcp check: E011)'
            ) from None

        self._prom = prom
        self._token = settings.METRICS_TOKEN
        self.multiprocess = bool(os.environ.get(MULTIPROCESS_ENV))
        self.registry = prom.CollectorRegistry(auto_describe=True)
        # In multiprocess mode the values live in files, summed at scrape time
        # by a `MultiProcessCollector`; the objects are then kept out of any
        # registry, or they would be counted twice.
        own = None if self.multiprocess else self.registry
        self.requests = prom.Counter(
            "wymcp_requests",
            "Requests by JSON-RPC method, protocol revision and outcome.",
            ["method", "revision", "outcome"],
            registry=own,
        )
        self.tool_calls = prom.Counter(
            "wymcp_tool_calls",
            "tools/call by tool, action and outcome.",
            ["tool", "action", "outcome"],
            registry=own,
        )
        self.refusals = prom.Counter(
            "wymcp_tool_refusals",
            "tools/call refused, by tool, action and the gate that refused it.",
            ["tool", "action", "gate"],
            registry=own,
        )
        self.operation = prom.Histogram(
            "mcp_server_operation_duration_seconds",
            "mcp.server.operation.duration: seconds to answer one MCP request.",
            [
                "mcp_method_name",
                "mcp_protocol_version",
                "gen_ai_tool_name",
                "error_type",
            ],
            buckets=DURATION_BUCKETS,
            registry=own,
        )
        self.session_duration = prom.Histogram(
            "mcp_server_session_duration_seconds",
            "mcp.server.session.duration: seconds from initialize to the end of "
            "a session this worker opened.",
            ["mcp_protocol_version"],
            buckets=DURATION_BUCKETS,
            registry=own,
        )
        self.http_errors = prom.Counter(
            "wymcp_http_errors",
            "Answers with a 4xx or 5xx status, by status and reason.",
            ["status", "reason"],
            registry=own,
        )
        self.body_bytes = prom.Counter(
            "wymcp_request_body_bytes",
            "Bytes of request bodies read (as sent, before inflating).",
            registry=own,
        )
        self.loop_lag = prom.Histogram(
            "wymcp_event_loop_lag_seconds",
            f"How late the event loop ran a timer due every {LAG_INTERVAL} s.",
            buckets=LAG_BUCKETS,
            registry=own,
        )
        self._series: dict[tuple[str, str, str, str, str, bool], _Series] = {}
        """The series of each label set (bounded: the labels are)."""
        self._by_fields: dict[_Fields, _Series] = {}
        """The series of the fields of records seen (`_labelled` says which)."""
        self._pending: list[_Series] = []
        """The series counted since the last flush."""
        self._body_bytes = 0
        """Request body bytes since the last flush."""
        mode: dict[str, Any] = {"multiprocess_mode": "livesum"}
        self.sessions = prom.Gauge(
            "wymcp_sessions", "Live sessions held by the worker.", registry=own, **mode
        )
        self.streams = prom.Gauge(
            "wymcp_streams",
            "Open long-lived streams (GET, subscriptions/listen).",
            registry=own,
            **mode,
        )
        self.tasks = prom.Gauge(
            "wymcp_tasks",
            "Tasks held in this worker's memory, by state.",
            ["state"],
            registry=own,
            **mode,
        )
        self.broker_round_trips = prom.Histogram(
            "wymcp_broker_round_trip_seconds",
            "Seconds of each Redis round trip of the BROKER, by store and "
            "operation family (its _count: the round trips).",
            ["store", "operation"],
            buckets=BROKER_BUCKETS,
            registry=own,
        )
        self.broker_errors = prom.Counter(
            "wymcp_broker_errors",
            "Redis round trips of the BROKER that failed, by store, operation "
            "family and reason.",
            ["store", "operation", "reason"],
            registry=own,
        )
        self.broker_tasks = prom.Gauge(
            "wymcp_broker_tasks",
            "Tasks in the BROKER's task store (every worker's), by state.",
            ["state"],
            registry=own,
            multiprocess_mode="livemax",
        )
        self._broker_series: dict[tuple[str, str], _Series] = {}
        self._error_children: dict[tuple[int, str], Any] = {}
        """The `http_errors` children by (status, reason) (`_http_error`)."""
        self._session_children: dict[str, Any] = {}
        """The `session_duration` children by revision label (bounded)."""

    # ------------------------------------------------------------ observe

    def observe(
        self, record: CallRecord, status: int, seconds: float, body_bytes: int
    ) -> None:
        """Count one answered request (what its record says, and its status).

        The series of a record's fields as they are (`_by_fields`) is found
        in one lookup; a record seen the first time goes through `_labelled`.
        The counts wait in plain integers for `flush`; the duration is added
        here (`_Series.add`, inline: this runs once per request).
        """
        fields = (
            record.method,
            record.revision,
            record.outcome,
            record.refused,
            record.tool,
            record.known_tool,
            record.action,
            record.known_action,
        )
        series = self._by_fields.get(fields)
        if series is None:
            series = self._labelled(fields)
        if not series.count:
            self._pending.append(series)
        series.count += 1
        series.seconds += seconds
        series.buckets[bisect_left(series.bounds, seconds)] += 1
        if status >= 400:  # noqa: PLR2004 - 4xx/5xx
            reason = record.reason
            if reason not in LIMITS:
                reason = REASONS.get(status, "other")
            self._http_error(status, reason).inc()
        self._body_bytes += body_bytes

    def _labelled(self, fields: _Fields) -> _Series:
        """The series of a record's `fields`, by their labels.

        The label values come from the catalogue and fixed vocabularies (an
        unknown name is `unknown`), and the series are kept by label set:
        bounded. The fields themselves are kept as a shortcut only when they
        are these labels' (a tool of the catalogue, a method, revision and
        outcome of the vocabularies), up to `FIELD_SETS`: a client sending
        new names fills neither.
        """
        method, revision, outcome, refused, tool, known_tool, action, known_action = (
            fields
        )
        bounded = method in METHODS and revision in SUPPORTED and outcome in OUTCOMES
        if method not in METHODS:
            method = UNKNOWN
        if revision not in SUPPORTED:
            revision = NONE
        if outcome not in OUTCOMES:  # a middleware's own code
            outcome = "middleware" if refused else "rpc_error"
        if method == "tools/call":
            bounded = bounded and known_tool and (action is None or known_action)
            tool = tool if known_tool and tool else UNKNOWN
            if action is None:
                action = NONE if known_tool else UNKNOWN
            elif not known_action:
                action = UNKNOWN
        else:
            bounded = bounded and tool is None and action is None
            tool = action = ""
        key = (method, revision, outcome, tool, action, refused)
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = self._make_series(key)
        if bounded and len(self._by_fields) < FIELD_SETS:
            self._by_fields[fields] = series
        return series

    def _http_error(self, status: int, reason: str) -> Any:
        """The `wymcp_http_errors` child of (status, reason), made once.

        `status` is an answer's (at most 1000 values), `reason` one of the
        fixed vocabularies: what is kept is bounded.
        """
        key = (status, reason)
        child = self._error_children.get(key)
        if child is None:
            child = self._error_children[key] = self.http_errors.labels(
                str(status), reason
            )
        return child

    def flush(self) -> None:
        """Add what was counted since the last flush to the series.

        Run on the event loop (the only thread that counts): before a
        scrape, every `LAG_INTERVAL` seconds, and when the app stops.
        """
        pending, self._pending = self._pending, []
        for series in pending:
            series.flush()
        if self._body_bytes:
            self.body_bytes.inc(self._body_bytes)
            self._body_bytes = 0

    def _make_series(self, key: tuple[str, str, str, str, str, bool]) -> _Series:
        method, revision, outcome, tool, action, refused = key
        counters = [self.requests.labels(method, revision, outcome)]
        if method == "tools/call":
            counters.append(self.tool_calls.labels(tool, action, outcome))
            if refused:
                gate = outcome if outcome in GATES else "middleware"
                counters.append(self.refusals.labels(tool, action, gate))
        error_type = "" if outcome == "ok" else outcome
        duration = self.operation.labels(method, revision, tool, error_type)
        return _Series(tuple(counters), duration)

    def broker_round_trip(
        self, store: str, operation: str, seconds: float, reason: str | None
    ) -> None:
        """Count one Redis round trip of the broker (`ProbedRedis`'s observer).

        The labels come from the broker's fixed vocabularies (`wymcp.broker.redis`).
        """
        key = (store, operation)
        series = self._broker_series.get(key)
        if series is None:
            duration = self.broker_round_trips.labels(store, operation)
            series = self._broker_series[key] = _Series((), duration, BROKER_BUCKETS)
        if not series.count:
            self._pending.append(series)
        series.add(seconds)
        if reason is not None:
            self.broker_errors.labels(store, operation, reason).inc()

    async def count_broker_tasks(self, engine: object) -> None:
        """Set `wymcp_broker_tasks` from the broker's store (its `task_counts`)."""
        counts = getattr(engine, "task_counts", None)
        if counts is None:
            return
        try:
            found = await asyncio.wait_for(counts(), BROKER_COUNT_WAIT)
        except Exception as error:  # noqa: BLE001 - counted as a broker error
            logger.warning(
                "wymcp: metrics: the broker's tasks could not be counted (%s)",
                type(error).__name__,
            )
            return
        for state in BROKER_TASK_STATES:
            self.broker_tasks.labels(state).set(found.get(state, 0))

    def session_ended(self, revision: str, seconds: float) -> None:
        """Observe the duration of a session that ended (the engine's hook)."""
        label = revision if revision in SUPPORTED else NONE
        child = self._session_children.get(label)
        if child is None:
            child = self._session_children[label] = self.session_duration.labels(label)
        child.observe(seconds)

    def refused_connection(self) -> None:
        """Count a connection refused 503 at MAX_CONNECTIONS (before any request)."""
        self._http_error(503, "max_connections").inc()

    def live(self, engine: object) -> None:
        """Set the gauges of what `engine` holds now (its `live()`, if it has one)."""
        live = getattr(getattr(engine, "engine", engine), "live", None)
        if live is None:
            return
        counts = live()
        self.sessions.set(counts.sessions)
        self.streams.set(counts.streams)
        for state in ("working", "input_required", "completed", "failed", "cancelled"):
            self.tasks.labels(state).set(counts.tasks.get(state, 0))

    # ------------------------------------------------------------- serve

    def exposition(self, accept: str | None) -> tuple[bytes, str]:
        """The text a scrape gets, and its content type (OpenMetrics if asked).

        One of two fixed formats, chosen by the media type alone (issue 27).
        """
        prom = self._prom
        registry = self.registry
        if self.multiprocess:
            from prometheus_client import multiprocess  # noqa: PLC0415 - only under gunicorn

            registry = prom.CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        if wants_openmetrics(accept):
            open_text = prom.openmetrics.exposition
            write, content_type = (
                open_text.generate_latest,
                open_text.CONTENT_TYPE_LATEST,
            )
        else:
            write = prom.exposition.generate_latest
            content_type = TEXT_FORMAT
        try:
            return write(registry), content_type
        except FileNotFoundError:  # a dead worker's file folded meanwhile: again
            return write(registry), content_type

    def authorized(self, headers: Mapping[str, str]) -> bool:
        """Whether the scrape carries METRICS_TOKEN (always, without one)."""
        if self._token is None:
            return True
        sent = headers.get("Authorization", "")
        scheme, _, token = sent.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            token.strip().encode("utf-8", "replace"), self._token
        )

    def probe(self, engine: object) -> Callable[[web.Application], AsyncIterator[None]]:
        """A cleanup context measuring event-loop lag while the app runs.

        It also flushes the counts every `LAG_INTERVAL` (and at the end) and
        refreshes the gauges of `engine` every 5 s, so a worker's series stay
        current in multiprocess mode, scraped or not.
        """

        async def probing(_app: web.Application) -> AsyncIterator[None]:
            task = asyncio.get_running_loop().create_task(self._probe(engine))
            yield
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            self.flush()

        return probing

    async def _probe(self, engine: object) -> None:
        loop = asyncio.get_running_loop()
        ticks = 0
        while True:
            due = loop.time() + LAG_INTERVAL
            await asyncio.sleep(LAG_INTERVAL)
            self.loop_lag.observe(max(0.0, loop.time() - due))
            self.flush()
            ticks += 1
            if ticks % LIVE_TICKS == 0:
                self.live(engine)
                await self.count_broker_tasks(engine)


def unauthorized() -> web.Response:
    """401 for a scrape without METRICS_TOKEN."""
    return error_response(
        401,
        INVALID_REQUEST,
        "Unauthorized: the metrics need the METRICS_TOKEN as a bearer token.",
        headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
    )
