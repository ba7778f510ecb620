"""Reading a POST body into JSON under BODY_LIMIT, BODY_TIMEOUT and the budgets.

The body is read as it arrives (inflated when aiohttp did not), its HTTP chunks
counted (`Framing`; the runner bounds its bytes on the wire), held against
`BODY_MEMORY_BUDGET`, and decoded (off the loop when large). Every failure
raises `Refused` with its answer (400-503).
"""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, Any

from aiohttp import web
from aiohttp.hdrs import CONTENT_ENCODING
from aiohttp.http_exceptions import PayloadEncodingError

from wymcp.conf import Settings
from wymcp.core.server import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    RETRY_AFTER,
    BodyError,
    OffLoopLane,
)
from wymcp.transport.aiohttp._admission import Refused, too_large
from wymcp.transport.aiohttp._answers import error_response
from wymcp.transport.aiohttp._body_budget import (
    COUNTED_FROM,
    BodyBudget,
    Reservation,
)
from wymcp.transport.aiohttp._chunk_framing import (
    Framing,
    FramingOverrunError,
    overrun_refusal,
)
from wymcp.transport.aiohttp._content_coding import (
    Inflater,
    InvalidCoding,
    TooLarge,
    body_codings,
)
from wymcp.transport.aiohttp._json_body import decode_json

if TYPE_CHECKING:
    from multidict import CIMultiDictProxy

NOT_BUFFERED: Any = object()
"""What `read_buffered` returns for a body it leaves to `read_json`."""
_OFF_LOOP = 64 * 1024
"""Bodies larger than this are decoded in a worker thread: `json` with hooks takes
about 1 us per object, so 4 MiB of `{}` would hold the loop for over a second."""


class BodyReader:
    """Reads request bodies for one endpoint, all within one memory budget."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        # a body that does not fit waits its turn: BODY_TIMEOUT per body ahead, and one
        # a body ahead is held while it is read and while its call runs
        held = settings.BODY_TIMEOUT + (settings.CALL_TIMEOUT or 0.0)
        self.bodies = BodyBudget(settings.BODY_MEMORY_BUDGET, wait=held)
        self._buffered_limit = min(settings.BODY_LIMIT, COUNTED_FROM)
        self._depth_limit = settings.JSON_DEPTH_LIMIT
        self._decoding = OffLoopLane()  # one large body decoded at a time, in turn

    def reserve(self, client: str) -> Reservation:
        """A reservation one request's body grows in (release it when done).

        `client` is the caller's `client_key`: its share of the budget and
        its turns in the decoding lane.
        """
        return self.bodies.reserve(client)

    def read_buffered(
        self, request: web.Request, headers: CIMultiDictProxy[str]
    ) -> Any:
        """`read_json` without awaiting, for the usual call; else `NOT_BUFFERED`.

        Only a body aiohttp already holds whole, sent without Content-Encoding
        (`headers` is `request.headers`) and of at most
        `COUNTED_FROM` bytes, which the budget never counts: the same read and
        decode as `read_json`, none of which waits. Any other body is left
        unread for `read_json`.
        """
        content = request.content
        if (
            not content.is_eof()
            or content.total_bytes > self._buffered_limit
            or CONTENT_ENCODING in headers
        ):
            return NOT_BUFFERED
        # All of it: `total_bytes` is within BODY_LIMIT, so nothing is past it.
        body = content.read_nowait(-1)
        try:
            return decode_json(body, depth_limit=self._depth_limit)
        except BodyError as exc:
            raise _parse_error(exc) from None

    async def read_json(self, request: web.Request, reservation: Reservation) -> Any:
        """The JSON value of the request's body, or `Refused` saying why not."""
        limit = self.settings.BODY_LIMIT
        inflater = self._inflater(request)
        expected = self._expected(request, inflater)
        chunks: list[bytes] = []
        size = held = 0
        content = request.content
        if content.is_eof():
            return await self._read_whole(request, reservation, inflater)
        framing = Framing()
        try:
            async with asyncio.timeout(self.settings.BODY_TIMEOUT) as sending:
                while True:
                    chunk, ended = await content.readchunk()
                    if ended and not framing.count(size + len(chunk)):
                        # what the client still sends is dropped unparsed, not
                        # read chunk by chunk until aiohttp's lingering ends
                        request.protocol.close()
                        raise framing.refusal(size + len(chunk))
                    if not chunk:
                        if ended:
                            continue
                        break
                    size += len(chunk)
                    if size > limit:
                        raise Refused(too_large(limit))
                    chunks.append(self._take(inflater, chunk))
                    held += len(chunks[-1])
                    await self._hold_sent(reservation, held, expected, sending)
        except (PayloadEncodingError, web.RequestPayloadError) as exc:
            # aiohttp failed to read the body: chunks that are not chunked
            # encoding, or (under a runner that inflates) data that is not
            # gzip; or the runner stopped reading it (framing past its bytes)
            raise _unreadable(exc) from None
        except TimeoutError:
            raise Refused(
                error_response(
                    408,
                    INVALID_REQUEST,
                    "Request timeout: the body did not arrive within "
                    f"BODY_TIMEOUT ({self.settings.BODY_TIMEOUT:g} s).",
                    close=True,
                )
            ) from None
        reservation.shrink_to(held)  # read: what it holds is known now
        return await self._decode(chunks, inflater, reservation)

    async def _read_whole(
        self,
        request: web.Request,
        reservation: Reservation,
        inflater: Inflater | None,
    ) -> Any:
        """`read_json` of a body aiohttp holds whole: nothing can trickle.

        No BODY_TIMEOUT timer is armed. At most one byte over the limit is
        copied out (at most one piece aiohttp holds). A compressed body that
        must wait its turn waits holding its compressed bytes only (its
        inflated size asked for), and is inflated again once let in.
        """
        limit = self.settings.BODY_LIMIT
        sent = request.content.read_nowait(limit + 1)
        if len(sent) > limit:
            raise Refused(too_large(limit))
        body = self._take(inflater, sent)
        size = len(body)
        if inflater is not None and not reservation.grow_to(size):
            del body  # not kept while it waits
            if not await self.bodies.admit(reservation, len(sent), size):
                raise self._full()
            inflater = self._inflater(request)
            body = self._take(inflater, sent)
        else:
            await self._hold(reservation, size, size)
        return await self._decode([body], inflater, reservation)

    def _expected(self, request: web.Request, inflater: Inflater | None) -> int:
        """The bytes a body may hold in all, held from its first counted byte.

        As sent, the body is its Content-Length (at most BODY_LIMIT: admitted).
        Chunked or compressed, it is known once read: till then the most it
        can be (BODY_LIMIT inflated, within the budget), so that the bodies
        let in never crowd out one another part way.
        """
        if inflater is None and request.content_length:
            return request.content_length
        budget = self.bodies.budget
        return (
            self.settings.BODY_LIMIT
            if budget is None
            else min(self.settings.BODY_LIMIT, budget)
        )

    def _inflater(self, request: web.Request) -> Inflater | None:
        """An `Inflater` for a compressed body aiohttp does not inflate itself.

        Under `wymcp serve` and `GunicornWorker` aiohttp hands the body over
        as sent; a runner that inflates marks the stream with its compressed
        size (`total_compressed_bytes`), and then the bytes read are inflated.
        """
        coding = self._coding(request)
        return None if coding is None else Inflater(coding, self.settings.BODY_LIMIT)

    @staticmethod
    def _coding(request: web.Request) -> str | None:
        """The coding of a body aiohttp did not inflate (None: as sent is JSON)."""
        values = request.headers.getall("Content-Encoding", ())
        if not values:
            return None
        codings = body_codings(values)
        inflated = getattr(request.content, "total_compressed_bytes", None)
        if not codings or inflated is not None:
            return None
        return codings[0]

    def _take(self, inflater: Inflater | None, chunk: bytes) -> bytes:
        if inflater is None:
            return chunk
        try:
            return inflater.feed(chunk)
        except TooLarge:
            raise Refused(too_large(self.settings.BODY_LIMIT)) from None
        except InvalidCoding:
            raise Refused(_bad_coding()) from None

    async def _hold(self, reservation: Reservation, held: int, expected: int) -> None:
        """Count `held` bytes (`expected` in all) against the budget, or refuse.

        The first counted bytes of a body may wait their turn for the budget.
        """
        if not await reservation.hold(held, expected):
            raise self._full()

    async def _hold_sent(
        self,
        reservation: Reservation,
        held: int,
        expected: int,
        sending: asyncio.Timeout,
    ) -> None:
        """`_hold` for a body still arriving under its BODY_TIMEOUT, `sending`.

        A wait for its turn is the server's time, not the client's: the
        deadline moves on by as long as the body waited.
        """
        if reservation.holds or held <= COUNTED_FROM:  # never waits
            if not reservation.grow_to(held):  # a body let in grows or is refused
                raise self._full()
            return
        when = sending.when()
        sending.reschedule(None)  # no BODY_TIMEOUT while it waits (wait bounds it)
        loop = asyncio.get_running_loop()
        waited = loop.time()
        try:
            await self._hold(reservation, held, expected)
        finally:
            if when is not None:
                sending.reschedule(when + loop.time() - waited)

    def _full(self) -> Refused:
        return Refused(
            error_response(
                503,
                INTERNAL_ERROR,
                "Service unavailable: large request bodies being served fill "
                f"BODY_MEMORY_BUDGET ({self.bodies.budget} bytes). Retry later.",
                headers={"Retry-After": str(RETRY_AFTER)},
                close=True,
            )
        )

    async def _decode(
        self, chunks: list[bytes], inflater: Inflater | None, reservation: Reservation
    ) -> Any:
        """The body's JSON value; one over `_OFF_LOOP` bytes is decoded off the loop."""
        if inflater is not None:
            try:
                inflater.finish()
            except InvalidCoding:
                raise Refused(_bad_coding()) from None
        body = b"".join(chunks)
        chunks.clear()
        if len(body) <= _OFF_LOOP:
            return self._decode_now(body)
        decode = functools.partial(
            decode_json, body, depth_limit=self.settings.JSON_DEPTH_LIMIT
        )
        try:
            # Off the loop: the hooks of `json` run Python code, so the GIL
            # passes back to the loop while the thread decodes. One at a time:
            # eight decoding threads at once kept the GIL from the loop longer.
            work = await self._decoding.of(reservation.client).start(decode)
            try:
                return await asyncio.shield(work)
            except asyncio.CancelledError:
                reservation.release_after(work)  # the thread still holds it
                raise
        except BodyError as exc:
            raise _parse_error(exc) from None

    def _decode_now(self, body: bytes) -> Any:
        """Decode a body of at most `_OFF_LOOP` bytes on the loop."""
        try:
            return decode_json(body, depth_limit=self.settings.JSON_DEPTH_LIMIT)
        except BodyError as exc:
            raise _parse_error(exc) from None


def _parse_error(exc: BodyError) -> Refused:
    return Refused(error_response(400, PARSE_ERROR, f"Parse error: {exc.reason}"))


def _bad_coding() -> web.Response:
    return error_response(
        400,
        INVALID_REQUEST,
        "Bad request: the body is not valid data of its Content-Encoding.",
        close=True,
    )


def _unreadable(exc: Exception) -> Refused:
    if isinstance(exc, FramingOverrunError):
        return overrun_refusal(exc.allowance)
    return Refused(
        error_response(
            400,
            INVALID_REQUEST,
            "Bad request: the body could not be read (its chunked framing or "
            "its Content-Encoding is malformed).",
            close=True,
        )
    )
