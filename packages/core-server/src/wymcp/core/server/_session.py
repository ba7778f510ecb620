"""Sessions of the 2025 revisions and the store that keeps them.

`SessionStore` is the interface; `MemorySessionStore` the default: idle
expiry checked on access, and a cap on live sessions (the engine answers 503
when `add` refuses).
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final, Protocol

import attrs

from wymcp.core.server._exchange import Stream
from wymcp.core.server._jsonrpc import Held
from wymcp.core.server._session_declaration import EMPTY, JsonView
from wymcp.core.server._session_replay import Replay
from wymcp.core.server._stream_outbox import Outbox
from wymcp.core.server._subscriptions import watch_cost

DECLARATION_LIMIT: Final = 8192
"""Bytes (compact UTF-8 JSON) an `initialize` may spend on `capabilities` and
`clientInfo` together: a session keeps both for its whole life."""


def declaration_size(*values: object) -> int:
    """The compact JSON size of `values` together, in UTF-8 bytes."""
    return sum(
        len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
        for value in values
    )


def principal_key(principal: object | None) -> str | None:
    """A stable identity for binding sessions and sealed state to a caller.

    A mapping's `sub` (or `id`), an object's `sub`, `id` or `name`
    attribute, else `str(principal)`: claims that change on a token refresh
    (`exp`, `iat`) do not change who the caller is.
    """
    if principal is None:
        return None
    if isinstance(principal, Mapping):
        for key in ("sub", "id"):
            if principal.get(key) is not None:
                return f"{key}:{principal[key]}"
        return str(principal)
    for attribute in ("sub", "id", "name"):
        value = getattr(principal, attribute, None)
        if isinstance(value, str | int):
            return f"{attribute}:{value}"
    return str(principal)


def new_session_id() -> str:
    """32 random bytes, base64url without padding (43 visible ASCII chars)."""
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()


SHARED: Final[Mapping[str, str]] = MappingProxyType(
    {
        "protocol_version": "v",
        "capabilities_json": "c",
        "client_info_json": "i",
        "principal": "p",
        "log_level": "l",
        "initialized": "n",
        "subscriptions": "w",
        "dirty": "d",
    }
)
"""Each `Session` field every worker shares, and its key in `Session.shared()`."""

LOCAL_ONLY: Final[Mapping[str, str]] = MappingProxyType(
    {
        "id": "the key a shared record is kept under, not part of it",
        "last_seen": "a store's own clock (a shared store renews a TTL instead)",
        "closed": "an ended session's record is removed, not shared",
        "terminated": "an ended session's record is removed, not shared",
        "stream": "the GET stream is one worker's connection",
        "outbox": "the GET stream is one worker's connection",
        "in_flight": "calls run on the worker that took them",
        "cancelled": "calls run on the worker that took them",
        "pending": "questions wait on the worker that asked them",
        "watched_bytes": "derived from `subscriptions` (`watch_cost`)",
        "events": "numbers one worker's GET stream",
        "replay": "one worker's events, kept for resumption",
        "started": "when this process opened it (metrics)",
        "ended": "this process's metrics hook",
    }
)
"""Each `Session` field no other worker sees, and why."""


@attrs.define(eq=False)
class Session:
    """One live session.

    Its revision, the client's capabilities, its GET stream, the requests in
    flight and the list changes it is owed.
    """

    id: str
    protocol_version: str
    capabilities_json: bytes = EMPTY
    client_info_json: bytes = EMPTY
    principal: object | None = None
    log_level: str | None = None
    initialized: bool = False
    last_seen: float = 0.0
    closed: bool = False
    terminated: bool = False
    stream: Stream | None = None
    outbox: Outbox | None = None
    in_flight: dict[str | int, asyncio.Task[Any]] = attrs.field(factory=dict)
    cancelled: set[str | int] = attrs.field(factory=set)
    pending: dict[str, asyncio.Future[Any]] = attrs.field(factory=dict)
    dirty: set[str] = attrs.field(factory=set)
    subscriptions: set[str] = attrs.field(factory=set)
    watched_bytes: int = 0
    events: int = 0
    replay: Replay | None = None
    started: float | None = None
    """When this process opened it (`initialize`); None for one read from a store."""
    ended: Callable[[Session], None] | None = attrs.field(default=None, repr=False)
    """Told once, when a session this process opened ends (metrics)."""

    @property
    def client_capabilities(self) -> JsonView:
        """The capabilities the client declared (decoded when read)."""
        return JsonView(self.capabilities_json)

    @property
    def client_info(self) -> JsonView:
        """The `clientInfo` the client sent (decoded when read)."""
        return JsonView(self.client_info_json)

    def shared(self) -> dict[str, Any]:
        """The fields every worker shares (`SHARED`), as a JSON-ready record.

        The principal travels as its `principal_key`; sets as sorted lists.
        """
        return {
            "v": self.protocol_version,
            "c": self.capabilities_json.decode(),
            "i": self.client_info_json.decode(),
            "p": principal_key(self.principal),
            "l": self.log_level,
            "n": self.initialized,
            "w": sorted(self.subscriptions),
            "d": sorted(self.dirty),
        }

    @classmethod
    def from_shared(cls, session_id: str, record: Mapping[str, Any]) -> Session:
        """A local Session from `shared()`'s record, kept under `session_id`.

        Its principal is the recorded principal key, which the engine compares
        with the request's as it compares two principals. A record without
        subscriptions or owed list changes (an older worker's) has none.
        """
        watched = set(record.get("w", ()))
        return cls(
            id=session_id,
            protocol_version=record["v"],
            capabilities_json=record["c"].encode(),
            client_info_json=record["i"].encode(),
            principal=record["p"],
            log_level=record["l"],
            initialized=record["n"],
            subscriptions=watched,
            dirty=set(record.get("d", ())),
            watched_bytes=sum(watch_cost(uri) for uri in watched),
        )

    def holds(self, held: Held, key: str | int) -> bool:
        """Whether the question ("a") or call ("c") a message reaches is here.

        `answered_or_cancelled` says what a client message answers or cancels;
        one this session's copy on this worker does not hold is another's.
        """
        return key in (self.pending if held == "a" else self.in_flight)

    def next_event_id(self) -> str:
        """The id of the next event on the session's GET stream."""
        self.events += 1
        return f"evt-{self.events}"

    def close(self) -> None:
        """End the session: release its stream and fail what waits on it."""
        first = not self.closed
        self.closed = True
        if self.outbox is not None:
            self.outbox.end()
        if self.replay is not None:
            self.replay.close()
        for future in self.pending.values():
            if not future.done():
                future.cancel()
        self.pending.clear()
        if first and self.ended is not None:
            self.ended(self)

    def terminate(self) -> None:
        """End the session at the client's request (DELETE): stop its calls too."""
        self.terminated = True
        self.close()
        for task in self.in_flight.values():
            if not task.done():
                task.cancel()


class SessionStore(Protocol):
    """Where live sessions are kept."""

    def add(self, session: Session) -> bool:
        """Keep `session`; False when the store is full."""
        ...

    def get(self, session_id: str) -> Session | None:
        """The live session with this id (touched), or None."""
        ...

    def remove(self, session_id: str) -> Session | None:
        """Forget and return the session, or None."""
        ...

    def sessions(self) -> list[Session]:
        """Every live session."""
        ...


class MemorySessionStore:
    """Sessions in a dict, expired after `idle_timeout` seconds unseen."""

    def __init__(
        self,
        *,
        idle_timeout: float = 1800.0,
        max_sessions: int = 10_000,
        clock: Callable[[], float],
    ) -> None:
        self._idle_timeout = idle_timeout
        self._max_sessions = max_sessions
        self._clock = clock
        self._sessions: dict[str, Session] = {}

    def _expired(self, session: Session, now: float) -> bool:
        return now - session.last_seen > self._idle_timeout

    def _sweep(self, now: float) -> None:
        for sid in [sid for sid, s in self._sessions.items() if self._expired(s, now)]:
            self._sessions.pop(sid).close()

    def add(self, session: Session) -> bool:
        """Keep `session` unless the cap of live sessions is reached."""
        now = self._clock()
        if len(self._sessions) >= self._max_sessions:
            self._sweep(now)
        if len(self._sessions) >= self._max_sessions:
            return False
        session.last_seen = now
        self._sessions[session.id] = session
        return True

    def get(self, session_id: str) -> Session | None:
        """The live session, touched; an expired one is closed and forgotten."""
        session = self._sessions.get(session_id)
        if session is None:
            return None
        now = self._clock()
        if self._expired(session, now):
            del self._sessions[session_id]
            session.close()
            return None
        session.last_seen = now
        return session

    def remove(self, session_id: str) -> Session | None:
        """Forget the session."""
        return self._sessions.pop(session_id, None)

    def sessions(self) -> list[Session]:
        """Every live session (expired ones swept first)."""
        self._sweep(self._clock())
        return list(self._sessions.values())
