"""The engine's long-lived streams: how many are open, and how long each lasts.

GET session streams and `subscriptions/listen` count against `max_streams` in
all and `max_streams_per_client` per client (its principal, else its peer
address); a stream ends when the token that opened it expires. Only clients
holding a stream are remembered: never more than `max_streams` entries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from wymcp.core.server._authorization import Principal
from wymcp.core.server._exchange import Exchange, Reply, Stream
from wymcp.core.server._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    echoable_id,
    error_message,
)
from wymcp.core.server._session import principal_key

Client = tuple[str, str | None]
"""("principal", key) or ("peer", address): the two never collide."""

_REFUSALS = {
    "MAX_STREAMS": "too many open streams",
    "MAX_STREAMS_PER_CLIENT": "this client has too many open streams",
}
_EXPIRED = "The access token has expired."


class StreamCap:
    """Counts open streams against a total cap and a per-client cap."""

    def __init__(self, total: int, per_client: int) -> None:
        self._total = total
        self._per_client = per_client
        self._open = 0
        self._held: dict[Client, int] = {}

    @property
    def open(self) -> int:
        """How many streams are open now."""
        return self._open

    def acquire(self, client: Client) -> str | None:
        """Count one more stream for `client`, or return the setting refusing it."""
        if self._open >= self._total:
            return "MAX_STREAMS"
        held = self._held.get(client, 0)
        if held >= self._per_client:
            return "MAX_STREAMS_PER_CLIENT"
        self._open += 1
        self._held[client] = held + 1
        return None

    def release(self, client: Client) -> None:
        """Uncount one stream `acquire` counted for `client`."""
        self._open -= 1
        held = self._held[client] - 1
        if held:
            self._held[client] = held
        else:
            del self._held[client]


def client_of(exchange: Exchange) -> Client:
    """Whom a stream is counted against: its principal, else its peer address."""
    if exchange.principal is not None:
        return ("principal", principal_key(exchange.principal))
    return ("peer", exchange.peer)


Serve = Callable[[Exchange, Stream], Awaitable[Reply]]


class LongStreams:
    """Admits long-lived streams under the caps and ends them at token expiry."""

    def __init__(
        self,
        *,
        total: int,
        per_client: int,
        retry_after: int,
        wall_clock: Callable[[], float],
    ) -> None:
        self.cap = StreamCap(total, per_client)
        self._retry_after = str(retry_after)
        self._wall_clock = wall_clock

    async def hold(self, exchange: Exchange, stream: Stream, serve: Serve) -> Reply:
        """`serve` the exchange as one counted stream, or the 503 refusing it."""
        client = client_of(exchange)
        refused_by = self.cap.acquire(client)
        if refused_by is not None:
            if exchange.record is not None:
                exchange.record.reason = refused_by.lower()
            return Reply(
                503,
                error_message(
                    echoable_id(exchange.body),
                    INTERNAL_ERROR,
                    f"Service unavailable: {_REFUSALS[refused_by]} ({refused_by}). "
                    "Retry later.",
                ),
                {"Retry-After": self._retry_after},
            )
        try:
            return await self._until_expiry(exchange, stream, serve)
        finally:
            self.cap.release(client)

    async def _until_expiry(
        self, exchange: Exchange, stream: Stream, serve: Serve
    ) -> Reply:
        """Serve until the principal's token expires; then end the stream.

        An opened stream just ends (nothing more is sent: the client
        reconnects with a fresh token); one not opened yet is answered 401.
        """
        principal = exchange.principal
        expires = principal.expires_at if isinstance(principal, Principal) else None
        if expires is None:  # no token expiry to watch: no timer to arm
            return await serve(exchange, stream)
        deadline = asyncio.timeout(expires - self._wall_clock())
        try:
            async with deadline:
                return await serve(exchange, stream)
        except TimeoutError:
            if not deadline.expired():
                raise
        if stream.opened:
            return Reply(200, None)
        if exchange.challenge is not None:
            return exchange.challenge.unauthorized(_EXPIRED)
        return Reply(
            401, error_message(None, INVALID_REQUEST, f"Unauthorized: {_EXPIRED}")
        )
