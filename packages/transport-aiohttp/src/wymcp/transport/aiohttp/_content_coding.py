"""The content coding of a request body, and inflating one under a size bound.

Only `ACCEPT_CONTENT_ENCODING` codings (gzip, deflate) are inflated, one at a
time, each call producing no more than the bytes left under `BODY_LIMIT`, so a
compression bomb costs at most `BODY_LIMIT` bytes and time linear in them.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

_GZIP_WBITS = 16 + zlib.MAX_WBITS
_ZLIB_METHOD = 8
"""The low nibble of a zlib stream's first byte (RFC 1950: CM = 8, deflate)."""


class TooLarge(Exception):  # noqa: N818 - an outcome, not a failure
    """The inflated body would exceed the limit."""


class InvalidCoding(Exception):  # noqa: N818 - an outcome, not a failure
    """The body is not a valid stream of its declared coding."""


def body_codings(values: Iterable[str]) -> list[str]:
    """The codings `Content-Encoding` values name, lower case, `identity` left out."""
    return [
        coding
        for value in values
        for coding in (part.strip().lower() for part in value.split(","))
        if coding and coding != "identity"
    ]


class Inflater:
    """Inflates one gzip or deflate body, chunk by chunk, refusing past `limit`."""

    def __init__(self, coding: str, limit: int) -> None:
        self._coding = coding
        self._limit = limit
        self._size = 0
        self._decompressor: zlib._Decompress | None = None

    def feed(self, chunk: bytes) -> bytes:
        """Return what `chunk` inflates to; raise `TooLarge` or `InvalidCoding`."""
        if not chunk:
            return b""
        decompressor = self._decompressor
        if decompressor is None:
            decompressor = self._decompressor = zlib.decompressobj(
                self._wbits(chunk[0])
            )
        if decompressor.eof:  # data after the end of the stream
            raise InvalidCoding
        try:
            # At most one byte past the limit: never inflate what is refused.
            out = decompressor.decompress(chunk, self._limit + 1 - self._size)
        except zlib.error:
            raise InvalidCoding from None
        self._size += len(out)
        if self._size > self._limit or decompressor.unconsumed_tail:
            raise TooLarge
        if decompressor.unused_data:
            raise InvalidCoding
        return out

    def finish(self) -> None:
        """Raise `InvalidCoding` unless the body held one whole stream."""
        if self._decompressor is None or not self._decompressor.eof:
            raise InvalidCoding

    def _wbits(self, first: int) -> int:
        if self._coding == "gzip":
            return _GZIP_WBITS
        # deflate means zlib-wrapped (RFC 9110), but many clients send raw
        # deflate; the first byte tells them apart, as aiohttp's reader does.
        return zlib.MAX_WBITS if first & 0x0F == _ZLIB_METHOD else -zlib.MAX_WBITS
