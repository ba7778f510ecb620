"""What an engine is configured with (`EngineOptions`).

Field names are the lower-case settings names of `wymcp.conf` where one
exists; the engine never reads settings itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import attrs

from wymcp.core.server._jsonrpc import RETRY_AFTER
from wymcp.core.server._middleware import Middleware
from wymcp.core.server._rate_limits import RateRule, RateStore
from wymcp.core.server._revision import SUPPORTED, newest_first
from wymcp.core.server._session import SessionStore
from wymcp.core.server._task_store import TaskStore


def _versions(value: Iterable[str]) -> tuple[str, ...]:
    versions = tuple(value)
    unknown = [v for v in versions if v not in SUPPORTED]
    if unknown or not versions:
        raise ValueError(
            f"protocol_versions must be a non-empty subset of {list(SUPPORTED)}"
        )
    return newest_first(versions)


def _secrets(value: Iterable[bytes | str]) -> tuple[bytes | str, ...]:
    return tuple(value)


@attrs.frozen(kw_only=True)
class EngineOptions:
    """Engine configuration; every field has a working default.

    `state_secret` seals `requestState` (None: a random key per engine, so
    state does not survive a restart or cross workers); `state_secrets`,
    when not empty, replaces it: the first seals, every one opens (key
    rotation). `ttl_ms` and
    `cache_scope` are the 2026-07-28 cache hints of lists and reads.
    `publish_schema` is "compact" (a multi-action tool's `data` is an object
    whose description names each action's required fields) or "full" (each
    action's fields under a root `oneOf`, `full_input_schema`).
    `call_timeout` stops a tool still running after that many seconds
    (None: no limit). `result_limit` is the most bytes a tool's result may
    take (None: no limit); `expose_exception_messages` sends a raising
    tool's exception message (development only).
    `task_ttl` (seconds) is how long a task and its
    result are kept; `max_tasks` and `max_tasks_per_principal` cap the running
    tasks; `task_memory_budget` and `task_memory_budget_per_principal` bound
    the bytes of the ended tasks kept; `task_store` holds them (None: in this
    process's memory).
    `max_streams` caps the long-lived streams (GET, `subscriptions/listen`)
    open at once, `max_streams_per_client` those of one client.
    `middleware` runs around each request, outermost first (`CallRecord`).
    `rate_limits` are the `RATE_LIMITS` rules of `tools/call`, kept in
    `rate_store` (None: this process's memory, `LocalRates`).
    `tracing` makes an OpenTelemetry span of each request (the `[otel]` extra).
    """

    server_name: str = "wymcp"
    server_version: str = "0.1.0"
    server_title: str | None = None
    instructions: str | None = None
    protocol_versions: tuple[str, ...] = attrs.field(
        default=SUPPORTED, converter=_versions
    )
    strict: bool = True
    state_secret: bytes | str | None = None
    state_secrets: tuple[bytes | str, ...] = attrs.field(default=(), converter=_secrets)
    state_ttl: float = 600.0
    page_size: int = 100
    ttl_ms: int = 0
    cache_scope: str = attrs.field(
        default="public", validator=attrs.validators.in_(("public", "private"))
    )
    publish_schema: str = attrs.field(
        default="compact", validator=attrs.validators.in_(("compact", "full"))
    )
    session_idle_timeout: float = 1800.0
    max_sessions: int = 10_000
    max_streams: int = 10_000
    max_streams_per_client: int = 10_000
    retry_after: int = RETRY_AFTER
    client_request_timeout: float = 60.0
    call_timeout: float | None = None
    result_limit: int | None = 16 * 1024 * 1024
    expose_exception_messages: bool = False
    session_store: SessionStore | None = None
    middleware: tuple[Middleware, ...] = attrs.field(default=(), converter=tuple)
    rate_limits: tuple[RateRule, ...] = attrs.field(default=(), converter=tuple)
    rate_store: RateStore | None = None
    tracing: bool = False
    task_ttl: float = 3600.0
    task_poll_interval_ms: int = 1000
    max_tasks: int = 1000
    max_tasks_per_principal: int = 100
    task_memory_budget: int = 256 * 1024 * 1024
    task_memory_budget_per_principal: int = 32 * 1024 * 1024
    task_store: TaskStore | None = None
    clock: Callable[[], float] = time.monotonic
    wall_clock: Callable[[], float] = time.time
