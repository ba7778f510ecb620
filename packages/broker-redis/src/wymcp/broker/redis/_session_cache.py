"""A worker's copies of the sessions shared through Redis (`BROKER`): an LRU cache.

Every session lives in Redis; a worker keeps at most `max_sessions` copies of
those it serves. One more evicts the copy used least recently that holds no
stream, call or question (fetched again when next used); only a worker whose
every copy is busy refuses a session.
"""

from __future__ import annotations

from collections.abc import Callable

from wymcp.core.server import Session


def _busy(session: Session) -> bool:
    """Whether the copy holds what Redis does not: a stream, a call, a question."""
    return session.stream is not None or bool(session.in_flight or session.pending)


class SessionCache:
    """Session copies, least recently used first, expired after `idle_timeout`."""

    def __init__(
        self,
        *,
        idle_timeout: float,
        max_sessions: int,
        clock: Callable[[], float],
    ) -> None:
        self._idle_timeout = idle_timeout
        self._max_sessions = max_sessions
        self._clock = clock
        self._sessions: dict[str, Session] = {}  # least recently used first
        self.evicted = 0
        """Idle copies dropped to make room (each is fetched again when used)."""

    def _expired(self, session: Session, now: float) -> bool:
        return now - session.last_seen > self._idle_timeout

    def _sweep(self, now: float) -> None:
        """Forget expired copies: the least recently used, so the first ones."""
        while self._sessions:
            sid, oldest = next(iter(self._sessions.items()))
            if not self._expired(oldest, now):
                return
            del self._sessions[sid]
            oldest.close()

    def _evict(self) -> bool:
        """Drop the least recently used idle copy; False when every one is busy.

        Busy copies passed over move to the recent end, so the next eviction
        does not walk them again.
        """
        passed: list[Session] = []
        victim: str | None = None
        for sid, session in self._sessions.items():
            if not _busy(session):
                victim = sid
                break
            passed.append(session)
        for session in passed:
            del self._sessions[session.id]
            self._sessions[session.id] = session
        if victim is None:
            return False
        del self._sessions[victim]
        self.evicted += 1
        return True

    def add(self, session: Session) -> bool:
        """Keep `session`, evicting an idle copy if full; False if all are busy."""
        now = self._clock()
        if len(self._sessions) >= self._max_sessions:
            self._sweep(now)
        if len(self._sessions) >= self._max_sessions and not self._evict():
            return False
        session.last_seen = now
        self._sessions.pop(session.id, None)
        self._sessions[session.id] = session
        return True

    def get(self, session_id: str) -> Session | None:
        """The live copy, now the most recently used; an expired one is closed."""
        session = self._sessions.pop(session_id, None)
        if session is None:
            return None
        now = self._clock()
        if self._expired(session, now):
            session.close()
            return None
        session.last_seen = now
        self._sessions[session_id] = session
        return session

    def remove(self, session_id: str) -> Session | None:
        """Forget the copy."""
        return self._sessions.pop(session_id, None)

    def sessions(self) -> list[Session]:
        """Every live copy (expired ones swept first)."""
        self._sweep(self._clock())
        return list(self._sessions.values())
