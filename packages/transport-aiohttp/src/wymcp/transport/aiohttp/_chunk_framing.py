"""The framing a request body may take: its chunks, and its bytes on the wire.

A body may use `FREE_CHUNKS` chunks plus one per `BYTES_PER_CHUNK` bytes it carries
(aiohttp spends Python per chunk), and a request `framing_allowance` bytes beyond its
body: chunk-size lines and extensions carry none, and aiohttp's C parser bounds neither.
"""

from __future__ import annotations

from typing import Final

from aiohttp.http_exceptions import PayloadEncodingError

from wymcp.core.server import INVALID_REQUEST
from wymcp.transport.aiohttp._admission import Refused
from wymcp.transport.aiohttp._answers import error_response

FREE_CHUNKS: Final = 1024
"""Chunks any body may use, whatever it carries (a streaming client's pieces)."""
BYTES_PER_CHUNK: Final = 1024
"""Past `FREE_CHUNKS`, each further chunk must bring this many bytes on average."""

HEAD_BOUND: Final = 8190 + 128 * 8190
"""The most bytes aiohttp lets a request's head take (its defaults: a request
line of 8,190 bytes, 128 header lines of 8,190), trailers counted alike."""
READ_SLACK: Final = 256 * 1024
"""Bytes of one socket read not parsed yet (aiohttp reads at most 256 KiB)."""
BYTES_PER_FRAME: Final = 16
"""The framing bytes a chunk may take on the wire: a size line of up to 8 hex
digits and CRLF, and the CRLF after its data, with room to spare."""
FRAMING_FLOOR: Final = HEAD_BOUND + READ_SLACK + BYTES_PER_FRAME * FREE_CHUNKS
"""The framing any request may take, whatever its body carries (1.3 MiB)."""


def framing_allowance(carried: int) -> int:
    """The bytes beyond its body a request carrying `carried` bytes may send."""
    return FRAMING_FLOOR + BYTES_PER_FRAME * (carried // BYTES_PER_CHUNK)


def raw_allowance(body_limit: int) -> int:
    """The most bytes a request with a body of `body_limit` may send in all."""
    return body_limit + framing_allowance(body_limit)


class FramingOverrunError(PayloadEncodingError):
    """A request sent more framing than `framing_allowance`: nothing more is read."""

    def __init__(self, allowance: int) -> None:
        super().__init__(f"the request sent over {allowance} bytes of framing")
        self.allowance = allowance


def overrun_refusal(allowance: int) -> Refused:
    """The 400 of a body whose framing passed its bytes (the connection closes)."""
    return Refused(
        error_response(
            400,
            INVALID_REQUEST,
            "Bad request: the body's chunked framing takes too many bytes "
            f"(over {allowance} bytes beside the body: the room a head and the "
            "chunk-size lines of its chunks need). Send it with Content-Length, "
            "or in chunks without padding or extensions.",
            close=True,
        )
    )


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
