"""`/healthz` (liveness) and `/readyz` (readiness) for load balancers and Kubernetes.

Both are cheap, need no token, and pass the endpoint's Host/Origin checks.
Readiness fails while the worker drains (set first at shutdown), and when the
`BROKER` does not answer a PING within `BROKER_PING_TIMEOUT` seconds.
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


class Health:
    """The two probes of one endpoint, and whether it drains."""

    def __init__(self, admission: Admission, engine: object) -> None:
        self._admission = admission
        self._ping = getattr(engine, "ping", None)
        """The broker's PING (a brokered engine has one), or None."""
        self.draining = False

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
        if self._ping is not None:
            try:
                await asyncio.wait_for(self._ping(), BROKER_PING_TIMEOUT)
            except Exception as exc:  # noqa: BLE001 - any failure is "not ready"
                logger.warning(
                    "wymcp: readiness: the broker did not answer (%s)",
                    type(exc).__name__,
                )
                return _answer(503, "broker_unavailable")
        return _answer(200, "ready")

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
