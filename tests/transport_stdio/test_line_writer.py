"""The one writer of stdout: whole lines, a short answer for what JSON cannot carry."""

from __future__ import annotations

import contextlib
import json
import math
import time

import pytest

from wymcp.core.server import BodyError
from wymcp.transport.stdio._json_line import decode_line, encode_line
from wymcp.transport.stdio._line_writer import LineStream, LineWriter


class Collected:
    full = False

    def __init__(self, *, fail: bool = False) -> None:
        self.data = bytearray()
        self.fail = fail

    def write(self, data: bytes) -> None:
        if self.fail:
            raise BrokenPipeError("gone")
        self.data += data

    async def drain(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    def lines(self) -> list[object]:
        return [json.loads(line) for line in self.data.splitlines()]


def test_a_message_is_one_line_whatever_its_strings_hold():
    line = encode_line({"text": "a\nb\r\nc\u2028d", "n": 1})
    assert line.count(b"\n") == 1
    assert line.endswith(b"\n")
    assert json.loads(line)["text"] == "a\nb\r\nc\u2028d"


async def test_an_answer_json_cannot_carry_becomes_a_short_internal_error():
    output = Collected()
    writer = LineWriter(output)
    await writer.send({"jsonrpc": "2.0", "id": 4, "result": {"x": math.nan}})
    await writer.send({"jsonrpc": "2.0", "id": 5, "result": {"x": object()}})
    await writer.send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"p": math.inf},
        }
    )
    answers = output.lines()
    assert [a["id"] for a in answers] == [4, 5]
    assert {a["error"]["code"] for a in answers} == {-32603}


async def test_a_question_json_cannot_carry_fails_for_the_tool_that_asked():
    writer = LineWriter(Collected())
    with pytest.raises(TypeError):
        await writer.send(
            {"jsonrpc": "2.0", "id": "srv-1", "method": "x", "params": {"o": object()}}
        )


async def test_a_gone_reader_is_a_connection_error_and_stays_gone():
    output = Collected(fail=True)
    writer = LineWriter(output)
    with pytest.raises(ConnectionResetError):
        await writer.send({"jsonrpc": "2.0", "id": 1, "result": {}})
    assert writer.gone
    output.fail = False
    with pytest.raises(ConnectionResetError):
        await LineStream(writer).send({"jsonrpc": "2.0", "method": "n"})
    assert output.data == b""


async def test_the_stream_skips_priming_events_and_ignores_event_ids():
    output = Collected()
    stream = LineStream(LineWriter(output))
    assert not stream.opened
    await stream.open({"X-Accel-Buffering": "no"})
    await stream.send(None, event_id="evt-1")
    await stream.send({"jsonrpc": "2.0", "method": "n"}, event_id="evt-2")
    assert stream.opened
    assert output.lines() == [{"jsonrpc": "2.0", "method": "n"}]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"a": 1e400}', "too large"),
        (b'{"a": Infinity}', "not a JSON number"),
        (b'{"a": "\\ud800"}', "lone surrogate"),
        (b'{"a": ' + b"1" * 5000 + b"}", "too many digits"),
        (b"\xef\xbb\xbf{}", "not valid JSON"),
    ],
)
def test_the_decoding_policy_says_why_without_quoting(line, reason):
    with pytest.raises(BodyError, match=reason) as refused:
        decode_line(line, depth_limit=100)
    assert "1111" not in refused.value.reason


def test_brackets_after_an_unterminated_string_are_no_nesting():
    """The scan is the HTTP transport's: an unterminated string runs to the end.

    (Its own scan required the closing quote: it counted these 500 brackets
    and retried at every later quote, which made the scan quadratic.)
    """
    line = b'["' + b"[" * 500
    with pytest.raises(BodyError) as refused:
        decode_line(line, depth_limit=100)
    assert refused.value.reason.startswith("the message is not valid JSON (")
    assert "at column" in refused.value.reason
    assert "line" not in refused.value.reason


def _best_time(line: bytes) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        with contextlib.suppress(BodyError):
            decode_line(line, depth_limit=100)
        best = min(best, time.perf_counter() - start)
    return best


def test_a_deep_unterminated_string_is_refused_in_linear_time():
    """101 `[`, a quote, then `\\"` k times: 4 times the bytes, about 4 times the time.

    The old scan grew 17 times (2.6 s at k = 8,000; a 4 MiB line took hours).
    """

    def line(k: int) -> bytes:
        return b"[" * 101 + b'"' + b'\\"' * k

    ratios = []
    for _ in range(3):  # a burst of load on a shared machine slows one try
        ratios.append(_best_time(line(8_000)) / _best_time(line(2_000)))
        if ratios[-1] < 10:
            return
    pytest.fail(f"time grew {ratios} times for a 4 times longer line")
