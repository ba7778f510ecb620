"""A 2025 session's GET stream, resumed with `Last-Event-ID` from its `Replay`.

A GET naming an event of the GET stream replays the kept events after it, then
goes on live; one naming an event of a POST stream the server closed early
continues that stream until its answer. An unknown or dropped id replays
nothing: the stream starts afresh (the spec makes replay a MAY).
"""

from __future__ import annotations

from typing import Any

from wymcp.core.server._exchange import Reply, Stream
from wymcp.core.server._jsonrpc import notification
from wymcp.core.server._session import Session
from wymcp.core.server._session_replay import (
    GET_STREAM,
    Event,
    Replay,
    event_id,
    event_seq,
)
from wymcp.core.server._stream_outbox import Outbox
from wymcp.core.server._stream_pump import pump


def replay_of(session: Session) -> Replay:
    """The session's kept events, made on first use."""
    if session.replay is None:
        session.replay = Replay()
    return session.replay


def next_seq(session: Session) -> int:
    """The number of the session's next event (ids are unique per session)."""
    session.events += 1
    return session.events


async def serve_session_stream(
    session: Session, last_event_id: str | None, stream: Stream
) -> Reply:
    """Serve a GET of `session`: resume what `last_event_id` names, or start."""
    replay = replay_of(session)
    seq = event_seq(last_event_id)
    resumed = None if seq is None else replay.find(seq)
    if resumed is not None and resumed.stream != GET_STREAM:
        await _continue_post_stream(session, replay, resumed, stream)
        return Reply(200, None)
    missed = [] if resumed is None else replay.after(GET_STREAM, resumed.seq)
    await _serve_get_stream(session, replay, missed, stream)
    return Reply(200, None)


async def _serve_get_stream(
    session: Session, replay: Replay, missed: list[Event], stream: Stream
) -> None:
    """The live GET stream: missed events, a priming event, then each message."""
    if session.outbox is not None:
        session.outbox.end()
    outbox = Outbox(name="session stream")
    for kind in sorted(session.dirty):
        outbox.put(
            notification(f"notifications/{kind}/list_changed"), key=("list", kind)
        )
    session.outbox = outbox
    session.stream = stream

    async def send(message: Any) -> None:
        seq = next_seq(session)
        replay.record(seq, GET_STREAM, message)
        await stream.send(message, event_id=event_id(seq))

    async def first() -> None:
        await stream.open()
        for event in missed:
            if event.message is not None:
                await stream.send(event.message, event_id=event_id(event.seq))
        await send(None)

    try:
        await pump(outbox, send, first=first, what="session stream")
    finally:
        if session.outbox is outbox:
            session.stream = None
            session.outbox = None


async def _continue_post_stream(
    session: Session, replay: Replay, start: Event, stream: Stream
) -> None:
    """Send the rest of a POST stream closed early, up to its answer."""
    seq = start.seq
    await stream.open()
    while True:
        for event in replay.after(start.stream, seq):
            seq = event.seq
            if event.message is not None:
                await stream.send(event.message, event_id=event_id(seq))
            if event.last:
                return
        if session.closed or start.stream not in replay.running:
            return
        await replay.changed()
