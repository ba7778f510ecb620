"""The framing a request body may take: its chunks, and its bytes on the wire.

A body may use `FREE_CHUNKS` chunks plus one per `BYTES_PER_CHUNK` bytes it carries
(aiohttp spends Python per chunk), and a request `raw_allowance` bytes: chunk-size
lines and extensions carry no body, and aiohttp's C parser bounds neither.
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
BYTES_PER_FRAME: Final = 16
"""The framing bytes a chunk may take on the wire: a size line of up to 8 hex
digits and CRLF, and the CRLF after its data, with room to spare."""


def raw_allowance(body_limit: int) -> int:
    """The bytes one request may send: head, `body_limit` of body, its framing."""
    chunks = FREE_CHUNKS + body_limit // BYTES_PER_CHUNK
    return HEAD_BOUND + body_limit + BYTES_PER_FRAME * chunks


class FramingOverrunError(PayloadEncodingError):
    """A request sent more bytes than `raw_allowance`: nothing more is read of it."""

    def __init__(self, allowance: int) -> None:
        super().__init__(f"the request sent more than {allowance} bytes")
        self.allowance = allowance


def overrun_refusal(allowance: int) -> Refused:
    """The 400 of a body whose framing passed its bytes (the connection closes)."""
    return Refused(
        error_response(
            400,
            INVALID_REQUEST,
            "Bad request: the body's chunked framing takes too many bytes "
            f"(the request sent over {allowance} bytes: BODY_LIMIT plus the "
            "room a head and the chunk-size lines of its chunks need). Send it "
            "with Content-Length, or in chunks without padding or extensions.",
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
