"""stdin and stdout as asyncio byte streams.

Pipes go through the event loop; anything else (a regular file, /dev/null)
through blocking calls.
"""

from __future__ import annotations

import asyncio
import os
import selectors
import stat
from collections.abc import Callable
from typing import Final, Protocol

CHUNK: Final = 64 * 1024
"""Bytes read from stdin at a time."""
CLOSE_WAIT: Final = 5.0
"""Seconds stdout gets to flush at the end before what is left is dropped."""


class Output(Protocol):
    """Where the answer lines go (stdout)."""

    def write(self, data: bytes) -> None:
        """Queue `data` to be written, whole and in order."""
        ...

    @property
    def full(self) -> bool:
        """Whether writes are waiting for the reader (then stdin waits too)."""
        ...

    async def drain(self) -> None:
        """Wait until the queued bytes are written; raise if the reader is gone."""
        ...

    async def aclose(self) -> None:
        """Flush what is queued and close."""
        ...


class PipeInput:
    """A readable pipe (or tty, or socket) watched by the event loop."""

    def __init__(
        self, reader: asyncio.StreamReader, transport: asyncio.BaseTransport
    ) -> None:
        self._reader = reader
        self._transport = transport

    async def read(self) -> bytes:
        """The next chunk, or b"" at the end."""
        return await self._reader.read(CHUNK)

    def close(self) -> None:
        """Stop watching the pipe (its descriptor stays open)."""
        self._transport.close()


class BlockingInput:
    """A file descriptor the loop cannot watch, read in the default executor."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def read(self) -> bytes:
        """The next chunk, or b"" at the end."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, os.read, self._fd, CHUNK)

    def close(self) -> None:
        """Nothing to release: the descriptor stays open."""


class _Flow(asyncio.Protocol):
    """Back-pressure of a write pipe: `drain` waits while the pipe is full."""

    def __init__(self) -> None:
        self._paused = False
        self._waiters: list[asyncio.Future[None]] = []
        self.lost = False
        self.closed = asyncio.get_running_loop().create_future()

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        del exc
        self.lost = True
        self._wake()
        if not self.closed.done():
            self.closed.set_result(None)

    def _wake(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    @property
    def paused(self) -> bool:
        return self._paused and not self.lost

    async def drain(self) -> None:
        if self._paused and not self.lost:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter
        if self.lost:
            raise ConnectionResetError("the reader of the pipe is gone")


class PipeOutput:
    """A writable pipe watched by the event loop, with back-pressure."""

    def __init__(self, transport: asyncio.WriteTransport, flow: _Flow) -> None:
        self._transport = transport
        self._flow = flow

    @property
    def full(self) -> bool:
        """Whether the pipe is full: the client is not reading what it was sent."""
        return self._flow.paused

    def write(self, data: bytes) -> None:
        """Queue `data`."""
        if self._flow.lost or self._transport.is_closing():
            raise ConnectionResetError("the reader of the pipe is gone")
        self._transport.write(data)

    async def drain(self) -> None:
        """Wait while the pipe is full."""
        await self._flow.drain()

    def when_lost(self, callback: Callable[[], object]) -> None:
        """Call `callback` once the pipe closes (the client stopped reading)."""
        self._flow.closed.add_done_callback(lambda _: callback())

    async def aclose(self) -> None:
        """Flush and close the pipe; drop what a reader that stopped never took."""
        self._transport.close()
        try:
            await asyncio.wait_for(asyncio.shield(self._flow.closed), CLOSE_WAIT)
        except TimeoutError:
            self._transport.abort()


class BlockingOutput:
    """A file descriptor the loop cannot watch (a regular file): plain writes."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    full = False
    """Every write completes at once."""

    def write(self, data: bytes) -> None:
        """Write all of `data` now."""
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    async def drain(self) -> None:
        """Nothing is queued."""

    async def aclose(self) -> None:
        """Close the descriptor."""
        os.close(self._fd)


def _watchable(fd: int, events: int) -> bool:
    """Whether the event loop can watch `fd`: a pipe or socket, or a tty to read.

    Not /dev/null, nor a tty to write: its file description is often stderr's
    too, which must stay blocking for the logs.
    """
    mode = os.fstat(fd).st_mode
    tty = stat.S_ISCHR(mode) and events == selectors.EVENT_READ
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or tty):
        return False
    with selectors.DefaultSelector() as probe:
        try:
            probe.register(fd, events)
        except (OSError, ValueError):
            return False
    return True


async def open_input(fd: int) -> PipeInput | BlockingInput:
    """Read `fd` through the loop when it can watch it, else in the executor.

    The descriptor is left open; the caller restores its blocking mode.
    """
    if not _watchable(fd, selectors.EVENT_READ):  # a regular file, /dev/null
        return BlockingInput(fd)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2 * CHUNK)
    pipe = os.fdopen(fd, "rb", buffering=0, closefd=False)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), pipe
    )
    return PipeInput(reader, transport)


async def open_output(fd: int) -> PipeOutput | BlockingOutput:
    """Write to `fd` (which this takes over and closes) through the loop, if it can."""
    if not _watchable(fd, selectors.EVENT_WRITE):  # a regular file, /dev/null
        return BlockingOutput(fd)
    loop = asyncio.get_running_loop()
    pipe = os.fdopen(fd, "wb", buffering=0)
    transport, flow = await loop.connect_write_pipe(_Flow, pipe)
    return PipeOutput(transport, flow)
