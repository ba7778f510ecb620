"""Newline framing of stdin with a bound: no line longer than the limit is kept.

A line over the limit is skipped to its newline (only its first bytes are
kept, to find the request id); the buffer never holds more than the limit
plus one chunk.
"""

from __future__ import annotations

from typing import Final, Protocol

import attrs

PREFIX: Final = 512
"""Bytes of an oversized line kept to echo its request id."""


class ChunkSource(Protocol):
    """Where bytes come from (stdin): `read` returns b"" at the end."""

    async def read(self) -> bytes:
        """The next chunk of bytes, or b"" when there are no more."""
        ...


@attrs.frozen
class TooLong:
    """A line longer than the limit, skipped; `prefix` is its first bytes."""

    prefix: bytes


class LineReader:
    """Yields the lines of a `ChunkSource`, each without its newline."""

    def __init__(self, source: ChunkSource, *, limit: int) -> None:
        self._source = source
        self._limit = limit
        self._buffer = bytearray()
        self._scanned = 0
        self._eof = False

    async def _fill(self) -> None:
        chunk = await self._source.read()
        if chunk:
            self._buffer += chunk
        else:
            self._eof = True

    async def _skip_line(self) -> None:
        """Drop bytes up to and including the next newline (or to the end)."""
        while not self._eof:
            await self._fill()
            end = self._buffer.find(b"\n")
            if end >= 0:
                del self._buffer[: end + 1]
                return
            self._buffer.clear()

    async def next_line(self) -> bytes | TooLong | None:
        """The next non-blank line, a `TooLong`, or None at the end of input."""
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                self._scanned = 0
            elif len(self._buffer) > self._limit:
                prefix = bytes(self._buffer[:PREFIX])
                self._buffer.clear()
                self._scanned = 0
                await self._skip_line()
                return TooLong(prefix)
            elif self._eof:
                if not self._buffer:
                    return None
                line = bytes(self._buffer)
                self._buffer.clear()
            else:
                self._scanned = len(self._buffer)
                await self._fill()
                continue
            if len(line) > self._limit:
                return TooLong(line[:PREFIX])
            if line.strip():
                return line.removesuffix(b"\r")
