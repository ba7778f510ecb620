"""Serving metrics scrapes: one at a time per worker, on their own thread.

A scrape's text grows with the series, so it is made off the loop; on one
thread of its own (not the default executor the gates and tools share), one
scrape at a time, a few more waiting briefly, the rest answered 503.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable
from typing import Final

from aiohttp import web

from wymcp.core.server import INVALID_REQUEST, RETRY_AFTER
from wymcp.transport.aiohttp._answers import error_response

SCRAPES_WAITING: Final = 4
"""Scrapes that may wait while one runs; past them a scrape gets 503."""
SCRAPE_WAIT: Final = 5.0
"""Seconds a scrape waits for the one running before it gets 503."""

OPENMETRICS: Final = "application/openmetrics-text"


def wants_openmetrics(accept: str | None) -> bool:
    """Whether `Accept` names OpenMetrics (else the text format 0.0.4).

    One of two fixed formats: parameters (`version`, `escaping`) are not
    read, so nothing the scraper sends reaches the answer's Content-Type.
    """
    return any(
        part.partition(";")[0].strip().lower() == OPENMETRICS
        for part in (accept or "").split(",")
    )


class Scrapes:
    """Runs the scrapes of one endpoint: one at a time, on one thread."""

    def __init__(self) -> None:
        self._turn = asyncio.Lock()
        self._waiting = 0
        self._thread: concurrent.futures.ThreadPoolExecutor | None = None

    async def run(
        self,
        make: Callable[[], tuple[bytes, str]],
        *,
        before: Callable[[], Awaitable[None]],
    ) -> web.Response:
        """The scrape `make` answers, or 503 when too many are waiting.

        `before` is awaited on the loop once it is this scrape's turn (the gauges).
        """
        if self._turn.locked() and self._waiting >= SCRAPES_WAITING:
            return busy()
        self._waiting += 1
        try:
            async with asyncio.timeout(SCRAPE_WAIT):
                await self._turn.acquire()
        except TimeoutError:
            return busy()
        finally:
            self._waiting -= 1
        if self._thread is None:
            self._thread = concurrent.futures.ThreadPoolExecutor(
                1, thread_name_prefix="wymcp-scrape"
            )
        try:
            await before()
            made = asyncio.get_running_loop().run_in_executor(self._thread, make)
        except BaseException:
            self._turn.release()
            raise
        # the turn ends with the work, even if this scraper left
        made.add_done_callback(lambda _: self._turn.release())
        body, content_type = await asyncio.shield(made)
        return web.Response(
            body=body,
            headers={"Content-Type": content_type, "Cache-Control": "no-store"},
        )

    async def close(self, _app: web.Application | None = None) -> None:
        """Stop the scrape thread (at the application's cleanup)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.shutdown(wait=False, cancel_futures=True)


def busy() -> web.Response:
    """503 for a scrape while others run and wait."""
    return error_response(
        503,
        INVALID_REQUEST,
        "Too many scrapes at once; retry later.",
        headers={"Retry-After": str(RETRY_AFTER)},
    )
