"""Framing stdin: whole lines, a bound on what is kept, oversized lines skipped."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wymcp.transport.stdio._line_reader import PREFIX, LineReader, TooLong


class Chunks:
    """A ChunkSource from a list of byte strings; records the largest buffer."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = list(chunks)
        self.reads = 0

    async def read(self) -> bytes:
        self.reads += 1
        return self.chunks.pop(0) if self.chunks else b""


async def lines_of(reader: LineReader) -> list[object]:
    found = []
    while (line := await reader.next_line()) is not None:
        found.append(line)
    return found


async def test_lines_split_across_and_within_chunks():
    reader = LineReader(
        Chunks(b'{"a":', b"1}\n{}\n\n  \n[", b"2]\r\n", b"tail"), limit=100
    )
    assert await lines_of(reader) == [b'{"a":1}', b"{}", b"[2]", b"tail"]


async def test_an_oversized_line_is_skipped_and_the_next_one_read():
    body = b'{"id":5,"pad":"' + b"x" * 500 + b'"}'
    reader = LineReader(
        Chunks(body[:100], body[100:300], body[300:] + b"\nnext\n"), limit=64
    )
    first = await reader.next_line()
    assert isinstance(first, TooLong)
    assert first.prefix.startswith(b'{"id":5,')
    assert await reader.next_line() == b"next"
    assert await reader.next_line() is None


async def test_an_oversized_line_arriving_whole_is_skipped_too():
    reader = LineReader(Chunks(b"y" * 5000 + b"\nok\n"), limit=64)
    too_long = await reader.next_line()
    assert isinstance(too_long, TooLong)
    assert len(too_long.prefix) == PREFIX
    assert await reader.next_line() == b"ok"


@pytest.mark.parametrize("size", [10_000, 20_000])
async def test_the_buffer_never_holds_more_than_the_limit_and_a_chunk(size):
    chunk = 1000
    data = b"z" * size + b"\nafter\n"
    pieces = [data[i : i + chunk] for i in range(0, len(data), chunk)]
    source = Chunks(*pieces)
    reader = LineReader(source, limit=3000)
    largest = 0
    original = source.read

    async def watched() -> bytes:
        nonlocal largest
        largest = max(largest, len(reader._buffer))
        return await original()

    source.read = watched  # type: ignore[method-assign]
    assert isinstance(await reader.next_line(), TooLong)
    assert await reader.next_line() == b"after"
    assert largest <= 3000 + chunk


async def test_the_last_line_needs_no_newline_and_a_long_one_is_still_refused():
    assert await lines_of(LineReader(Chunks(b"{}"), limit=10)) == [b"{}"]
    [only] = await lines_of(LineReader(Chunks(b"x" * 11), limit=10))
    assert isinstance(only, TooLong)


class CountingBuffer(bytearray):
    """A bytearray that counts the bytes its `find` looks at."""

    scanned = 0

    def find(self, sub, start=0, *rest):  # type: ignore[override]
        self.scanned += len(self) - start
        return super().find(sub, start, *rest)


@pytest.mark.parametrize("pieces", [200, 400])
async def test_a_line_in_many_chunks_is_scanned_once_not_quadratically(pieces):
    line = b"q" * (100 * pieces)
    source = Chunks(*[line[i : i + 100] for i in range(0, len(line), 100)], b"\n")
    reader = LineReader(source, limit=len(line) + 1)
    reader._buffer = CountingBuffer()
    assert await reader.next_line() == line
    assert reader._buffer.scanned <= 2 * len(line)


@given(
    lines=st.lists(
        st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"").strip() or b"x"),
        max_size=20,
    ),
    cuts=st.lists(st.integers(min_value=1, max_value=50), max_size=30),
)
async def test_any_chunking_yields_the_same_lines(lines, cuts):
    data = b"".join(line + b"\n" for line in lines)
    pieces, start = [], 0
    for cut in cuts:
        pieces.append(data[start : start + cut])
        start += cut
    pieces.append(data[start:])
    reader = LineReader(Chunks(*[p for p in pieces if p]), limit=64)
    expected = [line.removesuffix(b"\r") for line in lines]
    assert await lines_of(reader) == expected
