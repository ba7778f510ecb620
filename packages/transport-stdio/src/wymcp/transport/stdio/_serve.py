"""Serve an engine on a pair of file descriptors until the input ends.

LIFESPAN is entered around it (`enter_lifespan`, as over HTTP). SIGINT and
SIGTERM end the input too; either way the connection shuts down as
`Connection.shutdown` says, and the descriptors are left as they were.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal

from wymcp.conf import Settings, enter_lifespan, served_engine
from wymcp.core.server import Engine
from wymcp.transport.stdio._connection import Connection
from wymcp.transport.stdio._line_writer import LineWriter
from wymcp.transport.stdio._pipes import PipeOutput, open_input, open_output

logger = logging.getLogger("wymcp.transport.stdio")


def build_stdio_engine(settings: Settings) -> Engine:
    """The engine of one stdio process: its sessions never expire while it runs.

    A stdio session is the connection itself; it ends with the process, so
    SESSION_IDLE_TIMEOUT does not apply. Its one client may hold all of
    MAX_STREAMS: MAX_STREAMS_PER_CLIENT tells HTTP clients apart. It is
    `wymcp.conf.served_engine`'s engine for the "stdio" runner; `BROKER` is
    not used (one process has no other worker to share with).
    """
    return served_engine(settings, runner="stdio")[0]


async def serve(
    engine: Engine,
    settings: Settings,
    *,
    input_fd: int = 0,
    output_fd: int = 1,
) -> None:
    """Serve `engine` on `input_fd` (read) and `output_fd` (written, then closed).

    `LIFESPAN` is entered first (what it yields is every call's `ctx.state`)
    and left last, after the calls in flight. Returns when the input ends (or
    on SIGINT/SIGTERM in the main thread), after the calls in flight
    finished or SHUTDOWN_GRACE ran out.
    """
    if settings.AUTH is not None:
        logger.warning(
            "wymcp: AUTH does not apply over stdio; the user who launched the "
            "process is the caller."
        )
    async with enter_lifespan(settings, engine):
        await _serve(engine, settings, input_fd=input_fd, output_fd=output_fd)


async def _serve(
    engine: Engine, settings: Settings, *, input_fd: int, output_fd: int
) -> None:
    """Serve until the input ends, then shut the connection down."""
    blocking = os.get_blocking(input_fd)
    source = await open_input(input_fd)
    output = await open_output(output_fd)
    writer = LineWriter(output)
    connection = Connection(
        engine,
        writer,
        body_limit=settings.BODY_LIMIT,
        depth_limit=settings.JSON_DEPTH_LIMIT,
        shutdown_grace=settings.SHUTDOWN_GRACE,
    )
    reading = asyncio.ensure_future(connection.read(source))
    if isinstance(output, PipeOutput):  # a client that stops reading is gone
        output.when_lost(reading.cancel)
    loop = asyncio.get_running_loop()
    handled: list[signal.Signals] = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError, RuntimeError):  # not the main thread
            loop.add_signal_handler(signum, reading.cancel)
            handled.append(signum)
    try:
        await asyncio.wait({reading})
        if not reading.cancelled() and (error := reading.exception()) is not None:
            logger.error("wymcp: reading stdin failed", exc_info=error)
    finally:
        for signum in handled:
            loop.remove_signal_handler(signum)
        source.close()
        await connection.shutdown()
        with contextlib.suppress(OSError):
            os.set_blocking(input_fd, blocking)
