"""The one writer of stdout: each message a whole line, nothing else ever.

A message that cannot be encoded becomes a short -32603 answer and one log
line; once the client stops reading, writes are dropped and `gone` is set.
"""

from __future__ import annotations

import logging
from typing import Any

from wymcp.core.server import INTERNAL_ERROR, echoable_id, error_message
from wymcp.transport.stdio._json_line import encode_line
from wymcp.transport.stdio._pipes import Output

logger = logging.getLogger("wymcp.transport.stdio")


def _unencodable(message: Any) -> bytes:
    return encode_line(
        error_message(
            echoable_id(message),
            INTERNAL_ERROR,
            "Internal error. The server logged the cause.",
        )
    )


class LineWriter:
    """Writes JSON-RPC messages to an `Output`, one line each."""

    def __init__(self, output: Output) -> None:
        self._output = output
        self.gone = False

    async def writable(self) -> None:
        """Wait while stdout is full, so stdin is read no faster than answers go."""
        while self._output.full and not self.gone:
            try:
                await self._output.drain()
            except (ConnectionError, OSError):
                self.gone = True

    async def send(self, message: Any) -> None:
        """Write one message; raise `ConnectionError` once the client is gone."""
        if self.gone:
            raise ConnectionResetError("the client closed stdout")
        try:
            data = encode_line(message)
        except (TypeError, ValueError, OverflowError, RecursionError):
            logger.exception("wymcp: a message cannot be written as JSON")
            if isinstance(message, dict) and "method" in message:
                if "id" in message:
                    raise  # a question to the client: the tool hears it failed
                return  # a notification: dropped, as on a gone stream
            data = _unencodable(message)
        try:
            self._output.write(data)
            await self._output.drain()
        except (ConnectionError, OSError) as exc:
            self.gone = True
            raise ConnectionResetError("the client closed stdout") from exc

    async def aclose(self) -> None:
        """Flush and close stdout."""
        try:
            await self._output.aclose()
        except (ConnectionError, OSError):
            self.gone = True


class LineStream:
    """The engine's `Stream` for one request: its messages go to stdout too."""

    def __init__(self, writer: LineWriter) -> None:
        self._writer = writer
        self.opened = False

    async def open(self, headers: Any = None) -> None:
        """Nothing to commit over stdio; later answers are plain lines."""
        del headers
        self.opened = True

    async def send(self, message: Any | None, *, event_id: str | None = None) -> None:
        """Write `message` (None, an SSE priming event, writes nothing)."""
        del event_id
        self.opened = True
        if message is not None:
            await self._writer.send(message)
