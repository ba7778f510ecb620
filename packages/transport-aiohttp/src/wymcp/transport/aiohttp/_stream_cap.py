"""How many long-lived streams are open, in all and per client (MAX_STREAMS*).

A client is its principal's subject when `AUTH` is on, else its peer address.
Only clients holding a stream are remembered, so the table never holds more
than `MAX_STREAMS` entries.
"""

from __future__ import annotations

Client = tuple[str, str]
"""("subject", sub) or ("peer", address): the two never collide."""


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
