"""A session call's POST stream that registers each question it carries in Redis.

Before a question (a request with an id `asked_id` made) reaches the client,
Redis learns that this worker waits for its answer: an answer POSTed to
another worker is relayed here, and only here (`RelayRoutes`). Once the
question is answered or given up, its record is deleted.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from wymcp.broker.redis._events import KeptPostStream
from wymcp.core.server import is_asked_id

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable

    from wymcp.broker.redis._events import RedisEvents
    from wymcp.broker.redis._relay_routes import RelayRoutes
    from wymcp.core.server import Session, Stream

logger = logging.getLogger("wymcp.broker.redis")


class AskingPostStream(KeptPostStream):
    """A `KeptPostStream` whose questions are registered before they are sent."""

    def __init__(
        self,
        inner: Stream,
        events: RedisEvents,
        session: Session,
        routes: RelayRoutes,
    ) -> None:
        super().__init__(inner, events, session.id)
        self._pending = session.pending
        self._routes = routes

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        """Write one event, a question registered first."""
        await self._register(message)
        await super().send(message, event_id=event_id)

    async def keep(self, message: Any, *, last: bool) -> None:
        """Keep one event of the closed stream, a question registered first."""
        await self._register(message)
        await super().keep(message, last=last)

    async def _register(self, message: Any) -> None:
        if not isinstance(message, dict) or "method" not in message:
            return
        rid = message.get("id")
        if not isinstance(rid, str) or not is_asked_id(rid):
            return
        try:
            await self._routes.asked_here(self._session_id, rid)
        except RedisError:
            logger.warning(
                "wymcp: BROKER cannot be reached; an answer to a question "
                "sent now reaches it only if POSTed to this worker",
                exc_info=True,
            )
            return
        waiting = self._pending.get(rid)
        if waiting is None or waiting.done():
            self._routes.forget(self._session_id, rid)
        else:
            waiting.add_done_callback(self._forget(rid))

    def _forget(self, rid: str) -> Callable[[asyncio.Future[Any]], None]:
        """Delete the record of `rid` once its question is answered or given up."""
        session_id, routes = self._session_id, self._routes

        def forget(_: asyncio.Future[Any]) -> None:
            routes.forget(session_id, rid)

        return forget
