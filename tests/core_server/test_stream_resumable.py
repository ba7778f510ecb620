"""Which transport streams a session call may end early or keep events for."""

from __future__ import annotations

from typing import Any

import pytest

from wymcp.core.server import EndsEarly, KeepsEvents
from wymcp.core.server._stream_resumable import _ends_early, _keeps_events


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
