"""Which transport streams a session call may end early or keep events for."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from wymcp.core.server import EndsEarly, KeepsEvents
from wymcp.core.server._call_detached import DetachedCalls
from wymcp.core.server._exchange import Reply
from wymcp.core.server._session import Session
from wymcp.core.server._session_stream import replay_of
from wymcp.core.server._stream_resumable import (
    ResumableStream,
    _ends_early,
    _keeps_events,
    run_resumable,
)


class _Ends:
    async def end_early(self, event_id: str, retry_ms: int) -> None:
        del event_id, retry_ms


class _Keeps(_Ends):
    async def keep(self, message: Any, *, last: bool) -> None:
        del message, last


class _Unset:
    end_early = None
    keep = None


class _OnInstance:
    def __init__(self) -> None:
        self.end_early = _Ends().end_early


@pytest.mark.parametrize(
    "stream", [_Ends(), _Keeps(), _Unset(), _OnInstance(), object(), None]
)
def test_the_stream_checks_answer_as_the_protocols_isinstance(stream: object) -> None:
    # they replace isinstance against the runtime protocols (costly on every
    # session call): a stream that could end early and is told it cannot would
    # never poll; one told it can without end_early would fail the call
    assert _ends_early(stream) is isinstance(stream, EndsEarly)
    assert _keeps_events(stream) is isinstance(stream, KeepsEvents)


def test_the_endpoint_stream_ends_early_and_keeps_nothing() -> None:
    from wymcp.transport.aiohttp._sse_stream import SseStream

    stream = SseStream.__new__(SseStream)
    assert _ends_early(stream)
    assert not _keeps_events(stream)


class _Endpoint:
    """A stream that can end its response early, as the endpoint's SseStream."""

    def __init__(self) -> None:
        self.opened = False
        self.ended: list[str] = []

    async def open(self, headers: Any = None) -> None:
        del headers
        self.opened = True

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        del message, event_id

    async def end_early(self, event_id: str, retry_ms: int) -> None:
        del retry_ms
        self.ended.append(event_id)


def _resumable() -> tuple[Any, Any]:

    session = Session(id="s", protocol_version="2025-11-25")
    return session, ResumableStream(session, _Endpoint())  # type: ignore[arg-type]


async def test_a_resumable_call_answers_and_fails_as_it_ran() -> None:

    _, stream = _resumable()

    async def answer() -> Reply:
        await asyncio.sleep(0)
        return Reply(200, {"ok": 1})

    async def fail() -> Reply:
        raise LookupError("the tool's own error")

    reply = await run_resumable(stream, answer, DetachedCalls())
    assert reply.body == {"ok": 1}
    with pytest.raises(LookupError, match="the tool's own error"):
        await run_resumable(stream, fail, DetachedCalls())


async def test_a_request_cancelled_before_an_early_close_cancels_its_call() -> None:

    _, stream = _resumable()
    started, seen = asyncio.Event(), []

    async def slow() -> Reply:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return Reply(200, {})

    detached = DetachedCalls()
    request = asyncio.create_task(run_resumable(stream, slow, detached))
    await started.wait()
    request.cancel()
    with pytest.raises(asyncio.CancelledError):
        await request
    assert seen == ["cancelled"]
    assert len(detached) == 0


async def test_a_request_cancelled_after_an_early_close_keeps_its_call() -> None:

    session, stream = _resumable()
    closed, go_on = asyncio.Event(), asyncio.Event()

    async def closes() -> Reply:
        assert await stream.close_early()
        closed.set()
        await go_on.wait()
        return Reply(200, {"jsonrpc": "2.0", "id": 1, "result": {}})

    detached = DetachedCalls()
    request = asyncio.create_task(run_resumable(stream, closes, detached))
    await closed.wait()
    request.cancel()
    with pytest.raises(asyncio.CancelledError):
        await request
    assert len(detached) == 1
    assert "post-1" in replay_of(session).running
    go_on.set()
    for _ in range(5):
        await asyncio.sleep(0)
    assert len(detached) == 0
    assert "post-1" not in replay_of(session).running  # its answer was kept
