"""What a transport serves: the engine, or a broker wrapping it (`ServedEngine`).

`wymcp.conf.served_engine` builds one from settings; the HTTP endpoint drives
it one `Exchange` at a time. `Engine` is one; so is a broker's engine.
"""

from __future__ import annotations

from typing import Protocol

from wymcp.core.schema import ToolSpec
from wymcp.core.server._exchange import Exchange, Reply, Stream


class ServedEngine(Protocol):
    """What the HTTP endpoint needs from `Engine` or from the broker wrapping it."""

    @property
    def tool_specs(self) -> tuple[ToolSpec, ...]:
        """Every tool served, as declared."""
        ...

    async def post(self, exchange: Exchange, stream: Stream) -> Reply:
        """Answer a POST (messages, calls) or write its answers to `stream`."""
        ...

    async def get(self, exchange: Exchange, stream: Stream) -> Reply:
        """Answer a GET: the session's stream, or a resumed one."""
        ...

    async def delete(self, exchange: Exchange) -> Reply:
        """End the session a DELETE names."""
        ...

    async def aclose(self) -> None:
        """End every session and stop what runs in the background."""
        ...
