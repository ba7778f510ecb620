"""`wymcp stdio`: load a settings module and serve it on stdin and stdout.

File descriptor 1 is kept for the answers and pointed at stderr, so nothing
but JSON-RPC ever reaches stdout (a stray print lands in the logs). Problems
are printed to stderr with exit status 1; the end of input exits 0 (1 if
LIFESPAN's exit failed).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import TextIO

from wymcp.conf import (
    LifespanExitError,
    engine_for_command,
    loop_factory,
    settings_for_command,
)
from wymcp.core.schema import RESERVED_NAME
from wymcp.transport.stdio._serve import build_stdio_engine, serve

logger = logging.getLogger("wymcp.transport.stdio")


def _standard_descriptors() -> TextIO:
    """Open /dev/null on whichever of fds 0-2 is closed; return stderr to print to.

    Else the answers' duplicate of fd 1 could land on fd 2, which fd 1 then
    points at: stray prints would reach the client.
    """
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    if sys.stderr is None:  # started without fd 2
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115 - for the process's life
    return sys.stderr


def run(module: str | None, *, err: TextIO | None = None) -> int:
    """Serve the settings module `module` over stdio; return the exit status."""
    stderr = _standard_descriptors()
    err = err or stderr
    settings = settings_for_command(module, err)
    if settings is None:
        return 1
    # one process, one client: a per-process STATE_SECRET cannot matter (W002)
    engine = engine_for_command(settings, build_stdio_engine, err, serving="stdio")
    if engine is None:
        return 1
    tools = [spec.name for spec in engine.tool_specs] + [RESERVED_NAME]
    print(
        f"wymcp stdio: serving {settings.SERVER_NAME} on stdin/stdout "
        f"(revisions {', '.join(settings.PROTOCOL_VERSIONS)}; tools "
        f"{', '.join(tools)}); close stdin to stop",
        file=err,
        flush=True,
    )
    sys.stdout.flush()
    answers = os.dup(1)
    os.dup2(2, 1)
    # Not asyncio.run: closing its loop waits for every task and worker thread,
    # so a call or a LIFESPAN exit that ignores cancellation would hold the
    # process forever after stdin closed.
    runner = asyncio.Runner(loop_factory=loop_factory(settings))
    status = 0
    try:
        runner.run(serve(engine, settings, input_fd=0, output_fd=answers))
    except LifespanExitError:  # logged where it happened
        status = 1
    except Exception:
        logger.exception("wymcp: the stdio server failed")
        status = 1
    if not runner.run(_settle(_UNWIND)):
        logger.warning(
            "wymcp: tasks or worker threads still running %g s after serving "
            "ended; not waited for",
            _UNWIND,
        )
        logging.shutdown()
        err.flush()
        os._exit(status)
    runner.close()
    return status


_UNWIND = 1.0
"""Seconds what is left after serving (cancelled tasks, worker threads) gets to end."""


async def _settle(seconds: float) -> bool:
    """Cancel the tasks left and end the worker threads; False if some outlive it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    current = asyncio.current_task()
    left = {task for task in asyncio.all_tasks() if task is not current}
    for task in left:
        task.cancel()
    if left:
        _, pending = await asyncio.wait(left, timeout=seconds)
        if pending:
            return False
    threads = loop.create_task(loop.shutdown_default_executor())
    _, pending = await asyncio.wait({threads}, timeout=max(0.0, deadline - loop.time()))
    return not pending
