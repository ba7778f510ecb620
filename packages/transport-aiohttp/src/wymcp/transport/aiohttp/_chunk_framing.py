"""The chunks a chunked request body may be framed in (a bound on framing work).

aiohttp spends a few microseconds of Python per HTTP chunk, however small: a
4 MiB body of 1-byte chunks cost seconds of CPU. A body may use `FREE_CHUNKS`
chunks plus one per `BYTES_PER_CHUNK` bytes it carries; past that it is refused.
"""

from __future__ import annotations

from typing import Final

from wymcp.core.server import INVALID_REQUEST
from wymcp.transport.aiohttp._admission import Refused
from wymcp.transport.aiohttp._answers import error_response

FREE_CHUNKS: Final = 1024
"""Chunks any body may use, whatever it carries (a streaming client's pieces)."""
BYTES_PER_CHUNK: Final = 1024
"""Past `FREE_CHUNKS`, each further chunk must bring this many bytes on average."""


class Framing:
    """Counts one body's HTTP chunks against its allowance."""

    __slots__ = ("chunks",)

    def __init__(self) -> None:
        self.chunks = 0

    def count(self, size: int) -> bool:
        """One more chunk ended with `size` bytes of body so far: still allowed?"""
        self.chunks += 1
        return self.chunks <= FREE_CHUNKS + size // BYTES_PER_CHUNK

    def refusal(self, size: int) -> Refused:
        """The 400 of a body framed past its allowance (the connection closes)."""
        return Refused(
            error_response(
                400,
                INVALID_REQUEST,
                "Bad request: the body's chunked framing is too fine "
                f"({self.chunks} chunks for {size} bytes; at most {FREE_CHUNKS} "
                f"chunks plus one per {BYTES_PER_CHUNK} bytes). Send it in larger "
                "chunks, or with Content-Length.",
                close=True,
            )
        )
