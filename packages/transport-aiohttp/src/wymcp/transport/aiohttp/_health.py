"""`/healthz` (liveness) and `/readyz` (readiness) for load balancers and Kubernetes.

Both are cheap, need no token, and pass the endpoint's Host/Origin checks.
Readiness fails while the worker drains, and when the `BROKER` misses a PING
(one at a time, its verdict kept `VERDICT_SECONDS`, one warning per outage).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from aiohttp import web

from wymcp.transport.aiohttp._admission import Admission, Refused
from wymcp.transport.aiohttp._answers import encode

logger = logging.getLogger("wymcp.transport.aiohttp")

LIVE_PATH: Final = "/healthz"
READY_PATH: Final = "/readyz"
BROKER_PING_TIMEOUT: Final = 2.0
VERDICT_SECONDS: Final = 1.0
"""How long a PING's verdict answers the probes that follow it."""


class Health:
    """The two probes of one endpoint, and whether it drains."""

    def __init__(self, admission: Admission, engine: object) -> None:
        self._admission = admission
        self._ping = getattr(engine, "ping", None)
        """The broker's PING (a brokered engine has one), or None."""
        self.draining = False
        self._pinging: asyncio.Task[bool] | None = None
        self._verdict: tuple[float, bool] | None = None
        self._broker_down = False

    async def live(self, request: web.Request) -> web.StreamResponse:
        """200 while the event loop answers: nothing else is asked."""
        try:
            self._admission.check_addressing(request)
        except Refused as refused:
            return refused.response
        return _answer(200, "ok")

    async def ready(self, request: web.Request) -> web.StreamResponse:
        """200 when the worker should get traffic; 503 and why otherwise."""
        try:
            self._admission.check_addressing(request)
        except Refused as refused:
            return refused.response
        if self.draining:
            return _answer(503, "draining")
        if self._ping is not None and not await self._broker_ready():
            return _answer(503, "broker_unavailable")
        return _answer(200, "ready")

    async def _broker_ready(self) -> bool:
        """Whether the broker answers: the last verdict, or the one PING in flight."""
        loop = asyncio.get_running_loop()
        verdict = self._verdict
        if verdict is not None and loop.time() - verdict[0] < VERDICT_SECONDS:
            return verdict[1]
        if self._pinging is None:
            self._pinging = loop.create_task(self._ping_once())
        return await asyncio.shield(self._pinging)

    async def _ping_once(self) -> bool:
        ping = self._ping
        assert ping is not None  # noqa: S101 - only called with a broker
        try:
            await asyncio.wait_for(ping(), BROKER_PING_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - any failure is "not ready"
            if not self._broker_down:
                logger.warning(
                    "wymcp: readiness: the broker did not answer (%s)",
                    type(exc).__name__,
                )
            answered = False
        else:
            if self._broker_down:
                logger.info("wymcp: readiness: the broker answers again")
            answered = True
        finally:
            self._pinging = None
        self._broker_down = not answered
        self._verdict = (asyncio.get_running_loop().time(), answered)
        return answered

    async def drain(self, _app: web.Application) -> None:
        """Fail readiness from now on (first of the shutdown callbacks)."""
        self.draining = True


def _answer(status: int, word: str) -> web.Response:
    return web.Response(
        status=status,
        body=encode({"status": word}),
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )
