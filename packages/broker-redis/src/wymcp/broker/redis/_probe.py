"""The one place the broker's Redis round trips are timed: `ProbedRedis`.

Every client the broker makes is a `ProbedRedis`; with `METRICS` on, the app
gives each an observer, told of each command or pipeline answered or failed,
by operation family and error reason from fixed vocabularies. Pub/sub
listening is not a round trip and is not counted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any, Final, Protocol

import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline
from redis.exceptions import (
    AuthenticationError,
    AuthorizationError,
    BusyLoadingError,
    NoPermissionError,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

STORES: Final = ("sessions", "tasks", "rates")
"""The `store` label: which of the broker's clients made the round trip."""

_FAMILIES: Final = {
    **dict.fromkeys(("EVALSHA", "EVAL", "EVALSHA_RO", "EVAL_RO", "FCALL"), "script"),
    **dict.fromkeys(("SCRIPT",), "script_load"),
    **dict.fromkeys(
        (
            "GET",
            "MGET",
            "EXISTS",
            "PTTL",
            "TTL",
            "HGET",
            "HMGET",
            "HGETALL",
            "ZCARD",
            "ZCOUNT",
            "ZRANGE",
            "ZRANGEBYSCORE",
            "ZSCORE",
            "XRANGE",
            "XREVRANGE",
            "XREAD",
            "XLEN",
            "INFO",
            "CONFIG",
        ),
        "read",
    ),
    **dict.fromkeys(
        (
            "SET",
            "DEL",
            "UNLINK",
            "EXPIRE",
            "PEXPIRE",
            "HSET",
            "HDEL",
            "ZADD",
            "ZREM",
            "XADD",
            "XTRIM",
            "INCR",
            "INCRBY",
        ),
        "write",
    ),
    "PUBLISH": "publish",
    "PING": "ping",
}
OPERATIONS: Final = frozenset({*_FAMILIES.values(), "pipeline", "other"})
"""The `operation` label: a command's family, `pipeline`, or `other`."""

REASONS: Final = (
    "timeout",
    "connection",
    "auth",
    "loading",
    "read_only",
    "out_of_memory",
    "no_script",
    "response",
    "other",
)
"""The `reason` label of a failed round trip."""


class BrokerObserver(Protocol):
    """What is told of each round trip (`Metrics.broker_round_trip`)."""

    def __call__(
        self, store: str, operation: str, seconds: float, reason: str | None
    ) -> None: ...


def operation_of(command: object) -> str:
    """The family of a command name (`other` for any wymcp does not send)."""
    if isinstance(command, bytes):
        command = command.decode("ascii", "replace")
    if not isinstance(command, str):
        return "other"
    # redis-py sends some as one string: "SCRIPT LOAD", "CONFIG GET"
    return _FAMILIES.get(command.partition(" ")[0].upper(), "other")


def reason_of(error: BaseException) -> str:
    """The reason a round trip failed, from a fixed vocabulary."""
    found = "other"
    if isinstance(error, (RedisTimeoutError, asyncio.TimeoutError)):
        found = "timeout"
    elif isinstance(
        error, (AuthenticationError, AuthorizationError, NoPermissionError)
    ):
        found = "auth"
    elif isinstance(error, BusyLoadingError):
        found = "loading"
    elif isinstance(error, (RedisConnectionError, OSError)):
        found = "connection"
    elif isinstance(error, ReadOnlyError):
        found = "read_only"
    elif isinstance(error, OutOfMemoryError):
        found = "out_of_memory"
    elif isinstance(error, NoScriptError):
        found = "no_script"
    elif isinstance(error, ResponseError):
        found = "response"
    return found


class ProbedRedis(aioredis.Redis):
    """A Redis client that tells its observer (if any) of each round trip."""

    store = "other"
    observer: BrokerObserver | None = None

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        """Run one command, timed (what every command method and script calls)."""
        observer = self.observer
        if observer is None:
            return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        operation = operation_of(args[0]) if args else "other"
        started = time.perf_counter()
        try:
            answer = await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        except Exception as error:
            observer(
                self.store, operation, time.perf_counter() - started, reason_of(error)
            )
            raise
        observer(self.store, operation, time.perf_counter() - started, None)
        return answer

    def pipeline(
        self,
        transaction: bool = True,  # noqa: FBT001, FBT002 - redis-py's signature
        shard_hint: str | None = None,
    ) -> Pipeline:
        """A pipeline whose `execute` is one round trip, timed."""
        pipe = _ProbedPipeline(
            self.connection_pool, self.response_callbacks, transaction, shard_hint
        )
        pipe.store, pipe.observer = self.store, self.observer
        return pipe


class _ProbedPipeline(Pipeline):
    store = "other"
    observer: BrokerObserver | None = None

    async def execute(self, raise_on_error: bool = True) -> list[Any]:  # noqa: FBT001, FBT002 - redis-py's signature
        observer = self.observer
        if observer is None or not self.command_stack:
            return await super().execute(raise_on_error)
        started = time.perf_counter()
        try:
            answers = await super().execute(raise_on_error)
        except Exception as error:
            observer(
                self.store, "pipeline", time.perf_counter() - started, reason_of(error)
            )
            raise
        observer(self.store, "pipeline", time.perf_counter() - started, None)
        return answers


def observe_broker(clients: Mapping[str, object], observer: BrokerObserver) -> None:
    """Tell `observer` of every round trip of each `ProbedRedis` in `clients`."""
    for store, client in clients.items():
        if isinstance(client, ProbedRedis):
            client.store = store if store in STORES else "other"
            client.observer = observer
