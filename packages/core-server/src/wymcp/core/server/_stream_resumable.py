"""A 2025-11-25 call's POST stream that the server may close early (SEP-1699).

Closing sends a priming event and ends the HTTP response; the call goes on (in
a task of its own), and what it sends, its answer last, is kept in the
session's `Replay` for the client's GET with `Last-Event-ID`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Protocol, TypeGuard, runtime_checkable

from wymcp.core.server._call_detached import DetachedCalls
from wymcp.core.server._exchange import Reply, Stream
from wymcp.core.server._jsonrpc import INTERNAL_ERROR, RpcError, rpc_error_message
from wymcp.core.server._revision import REVISIONS
from wymcp.core.server._session import Session
from wymcp.core.server._session_replay import REPLAY_BYTES, event_id, json_size
from wymcp.core.server._session_stream import next_seq, replay_of

RETRY_MS: Final = 1000
"""The `retry` a closed POST stream tells its client to wait before it resumes."""


@runtime_checkable
class EndsEarly(Protocol):
    """A transport stream that can end its response while the call goes on."""

    async def end_early(self, event_id: str, retry_ms: int) -> None:
        """Send a priming event with `retry`, then end the response."""
        ...


@runtime_checkable
class KeepsEvents(Protocol):
    """A transport stream that keeps a closed stream's events itself (BROKER).

    Its `end_early` names the priming event with its own id; `keep` stores
    what the call sends after, its answer last.
    """

    async def end_early(self, event_id: str, retry_ms: int) -> None:
        """Send a priming event with `retry`, then end the response."""
        ...

    async def keep(self, message: Any, *, last: bool) -> None:
        """Keep one event of the closed stream for the client's resumption."""
        ...


def _ends_early(stream: object) -> TypeGuard[EndsEarly]:
    """`isinstance(stream, EndsEarly)`, read as the protocol check reads it.

    A runtime protocol's `isinstance` lists the protocol's members anew on every
    call (~40k instructions on CPython 3.11), and every 2025-11-25 call asks.
    """
    return getattr(stream, "end_early", None) is not None


def _keeps_events(stream: object) -> TypeGuard[KeepsEvents]:
    """`isinstance(stream, KeepsEvents)`, read as the protocol check reads it."""
    return (
        getattr(stream, "keep", None) is not None
        and getattr(stream, "end_early", None) is not None
    )


class ResumableStream:
    """The stream a session call writes to; closable early by the tool."""

    def __init__(self, session: Session, inner: Stream) -> None:
        self._session = session
        self._inner = inner
        self._key: str | None = None

    @property
    def opened(self) -> bool:
        """Whether the SSE response has been committed."""
        return self._inner.opened

    @property
    def closed_early(self) -> bool:
        """Whether the server ended the response while the call goes on."""
        return self._key is not None

    async def open(self, headers: Mapping[str, str] | None = None) -> None:
        """Commit the SSE response (nothing once closed early)."""
        if self._key is None:
            await self._inner.open(headers)

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        """Write an event, or keep it for the client's resumption."""
        if self._key is None:
            await self._inner.send(message, event_id=event_id)
        elif _keeps_events(self._inner):
            await self._inner.keep(message, last=False)
        else:
            replay_of(self._session).record(next_seq(self._session), self._key, message)

    async def close_early(self) -> bool:
        """End the response now, the call going on; False if this stream cannot."""
        if self._key is not None:
            return True
        inner = self._inner
        if (
            not _ends_early(inner)
            or not REVISIONS[self._session.protocol_version].polls
        ):
            return False
        seq = next_seq(self._session)
        key = f"post-{seq}"
        self._key = key
        if not _keeps_events(inner):
            replay = replay_of(self._session)
            replay.record(seq, key, None)
            replay.running.add(key)
        await inner.end_early(event_id(seq), RETRY_MS)
        return True

    async def finish(self, reply: Reply) -> Reply:
        """Keep the call's answer for the resumed stream; what the transport sends.

        An answer larger than `REPLAY_BYTES` of JSON is kept as a short
        -32603 error instead, in the session's memory or in Redis alike.
        """
        key = self._key
        if key is None:
            return reply
        body = reply.body
        if body is not None and json_size(body) > REPLAY_BYTES:
            rid = body.get("id") if isinstance(body, dict) else None
            body = rpc_error_message(
                rid if isinstance(rid, str | int) else None,
                RpcError(
                    INTERNAL_ERROR,
                    "The answer is too large to keep for a resumed stream.",
                ),
            )
        if _keeps_events(self._inner):
            await self._inner.keep(body, last=True)
        else:
            replay_of(self._session).record(
                next_seq(self._session), key, body, last=True
            )
        return Reply(200, None)

    @property
    def ends_early(self) -> bool:
        """Whether the transport's stream can end its response mid-call."""
        return _ends_early(self._inner)

    async def run(self, run: Callable[[], Awaitable[Reply]]) -> Reply:
        """Run the call; its answer after an early close goes to the replay."""
        try:
            reply = await run()
        except BaseException:
            await self.abandon()
            raise
        return await self.finish(reply)

    async def abandon(self) -> None:
        """The call ended without an answer: end the resumed stream too."""
        key = self._key
        if key is None:
            return
        if _keeps_events(self._inner):
            await self._inner.keep(None, last=True)
        elif key in replay_of(self._session).running:
            replay_of(self._session).record(
                next_seq(self._session), key, None, last=True
            )


def resumable(session: Session, stream: Stream) -> Stream:
    """The stream a call of `session` writes to: closable early from 2025-11-25."""
    if not REVISIONS[session.protocol_version].polls:
        return stream
    return ResumableStream(session, stream)


async def run_resumable(
    stream: Stream | None,
    run: Callable[[], Awaitable[Reply]],
    detached: DetachedCalls,
) -> Reply:
    """Run a call on `stream`; an answer after an early close goes to the replay.

    A call whose stream can end early runs in a task of its own. If the
    request's task is cancelled (its client closed the connection) once the
    call ended its response, the call runs on, kept in `detached`, and its
    answer goes to the resumed stream; before that (or past the bound of
    `detached`), the call is cancelled with its request, as any call whose
    client left, and its resumed stream ends without an answer.
    """
    if not isinstance(stream, ResumableStream):
        return await run()
    if not stream.ends_early:
        return await stream.run(run)
    # The call's own end wakes this request (no `asyncio.shield`: its outer
    # future and done callback cost a loop turn more per call); cancelling
    # this request cancels only `ended`, never the call.
    ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    call = ended.get_loop().create_task(_signalled(stream, run, ended))
    try:
        await ended
        return call.result()  # the call's step has ended: its answer or error
    except asyncio.CancelledError:
        if stream.closed_early and not call.done() and detached.keep(call):
            raise
        call.cancel()
        with contextlib.suppress(BaseException):  # the request's own end is raised
            await call
        raise


async def _signalled(
    stream: ResumableStream,
    run: Callable[[], Awaitable[Reply]],
    ended: asyncio.Future[None],
) -> Reply:
    """`stream.run(run)`, then wake its request through `ended` (if it waits).

    `ended` is set in the call's last step, so the task is done before the
    request resumes to read its result. `stream.run` is inlined: a stream
    not closed early has nothing to finish (one coroutine less per call).
    """
    try:
        try:
            reply = await run()
        except BaseException:
            await stream.abandon()
            raise
        if stream.closed_early:
            reply = await stream.finish(reply)
        return reply
    finally:
        if not ended.done():
            ended.set_result(None)
