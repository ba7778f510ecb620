"""`serve(settings)`: check, build and serve a settings module over HTTP until stopped.

What `wymcp serve` runs once it has the settings: the banner once it
listens, SIGINT/SIGTERM to stop, SHUTDOWN_GRACE for the calls in flight, and
never a traceback for a problem of the settings (each is logged, exit 1).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys
from collections.abc import Collection, Sequence
from typing import TextIO

from aiohttp import web

from wymcp.conf import (
    CheckMessage,
    LifespanExitError,
    Settings,
    engine_for_command,
    loop_factory,
    served_engine,
)
from wymcp.core.schema import RESERVED_NAME
from wymcp.core.server import ECHO_LIMIT, Engine
from wymcp.transport.aiohttp._access_log import use_json_logs
from wymcp.transport.aiohttp._checks import CHECKS
from wymcp.transport.aiohttp._runner import make_runner
from wymcp.transport.aiohttp._setup import get_endpoint, mount

logger = logging.getLogger("wymcp.transport.aiohttp")

_UNWIND = 1.0
"""Seconds calls cancelled at the end of SHUTDOWN_GRACE get to end before the
process exits without them."""


def banner(settings: Settings, engine: Engine) -> list[str]:
    """The lines `serve` prints once it listens: where, what it speaks and serves."""
    host = f"[{settings.HOST}]" if ":" in settings.HOST else settings.HOST
    tools = [spec.name for spec in engine.tool_specs] + [RESERVED_NAME]
    return [
        f"wymcp serving http://{host}:{settings.PORT}{settings.PATH}",
        f"  revisions: {', '.join(settings.PROTOCOL_VERSIONS)}",
        f"  tools: {_names(tools)}",
        f"  resources: {_names(engine.resource_uris)}",
        f"  resource templates: {_names(engine.resource_templates)}",
        f"  prompts: {_names(engine.prompt_names)}",
        "  stop with Ctrl-C",
    ]


_BANNER_NAMES = 20


def _names(names: Sequence[str]) -> str:
    """The first names, comma-separated, then how many more (`none` for none)."""
    if not names:
        return "none"
    shown = ", ".join(name[:ECHO_LIMIT] for name in names[:_BANNER_NAMES])
    more = len(names) - _BANNER_NAMES
    return f"{shown}, and {more} more" if more > 0 else shown


def _log_problem(problem: CheckMessage) -> None:
    (logger.error if problem.is_error else logger.warning)("%s", problem)


def serve(
    settings: Settings, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Serve `settings` over HTTP until SIGINT or SIGTERM; return the exit status.

    The settings are checked and the engine built once; problems are logged
    (and a pointer to `wymcp check` printed to `err`, default stderr), exit 1.
    The banner goes to `out` (default stdout) once the port listens.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    if settings.LOG_FORMAT == "json":
        use_json_logs()
    built = engine_for_command(
        settings,
        served_engine,
        err,
        report=_log_problem,
        serving="http",
        checks=CHECKS,
    )
    if built is None:
        return 1
    engine, served = built
    app = web.Application()
    mount(app, settings, served)
    host = f"[{settings.HOST}]" if ":" in settings.HOST else settings.HOST
    # Not asyncio.run: closing its loop waits for every task and every worker
    # thread, so a call that ignores cancellation or blocks in a thread
    # would hold the process past SHUTDOWN_GRACE.
    runner = asyncio.Runner(loop_factory=loop_factory(settings))
    try:
        left = runner.run(
            _serve_until_stopped(app, settings, banner(settings, engine), out)
        )
    except OSError as exc:
        runner.close()
        print(
            f"wymcp: cannot listen on {host}:{settings.PORT}: {exc.strerror or exc}. "
            "Choose another --port or stop the other server.",
            file=err,
        )
        return 1
    except LifespanExitError:  # logged where it happened
        runner.close()
        return 1
    if left is not None:
        logger.warning(
            "wymcp: %s still running %g s after the stop signal "
            "(SHUTDOWN_GRACE + %g s); not waited for",
            left,
            settings.SHUTDOWN_GRACE + _UNWIND,
            _UNWIND,
        )
        _exit_now(out, err)
    runner.close()
    logger.info("wymcp stopped")
    return 0


def _exit_now(out: TextIO, err: TextIO) -> None:
    """End the process at once: abandoned calls and threads are not waited for."""
    logging.shutdown()
    out.flush()
    err.flush()
    os._exit(0)


async def _serve_until_stopped(
    app: web.Application, settings: Settings, banner: list[str], out: TextIO
) -> str | None:
    """Listen until SIGINT or SIGTERM, then let calls in flight finish.

    The runner (`make_runner`) applies HEADER_TIMEOUT, MAX_CONNECTIONS,
    SHUTDOWN_GRACE and handler cancellation. Return None if everything
    ended within SHUTDOWN_GRACE, else what was left (see `_stop`).
    """
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    # The endpoint writes its own access line (ACCESS_LOG): aiohttp's is off.
    runner = make_runner(app, settings, access_log=None)
    await runner.setup()
    try:
        try:
            await web.TCPSite(runner, settings.HOST, settings.PORT).start()
            # What start-up built (modules, the catalogue, compiled schemas)
            # lives as long as the process: out of the collector's sight, a
            # full collection walks only what serving made (p99 at load).
            gc.freeze()
            print("\n".join(banner), file=out, flush=True)
            await stop.wait()
            # readiness fails from the signal on, before the listener closes
            get_endpoint(app).health.draining = True
        except BaseException:
            await runner.cleanup()
            raise
        return await _stop(runner, settings.SHUTDOWN_GRACE)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)


async def _stop(runner: web.AppRunner, grace: float) -> str | None:
    """Stop serving within `grace` (+ `_UNWIND`) seconds; None, or what is left.

    The runner gives calls in flight `grace` seconds, then cancels them, then
    leaves LIFESPAN (whose exit has `grace` seconds of its own, see
    `enter_lifespan`); whatever still runs at the deadline (a call that ignores
    cancellation, a task, a worker thread of `asyncio.to_thread`) is not
    waited for. What is left is named for the log: the shutdown itself (calls
    in flight, then LIFESPAN's exit), tasks that ignored cancellation, or
    worker threads.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace + _UNWIND
    cleanup = loop.create_task(runner.cleanup())
    if not await _ended({cleanup}, deadline):
        return "the shutdown (calls in flight, then LIFESPAN's exit) was"
    cleanup.result()
    current = asyncio.current_task()
    others = {task for task in asyncio.all_tasks() if task is not current}
    for task in others:
        task.cancel()
    if not await _ended(others, deadline):
        return "tasks that ignored cancellation were"
    threads = loop.create_task(loop.shutdown_default_executor())
    if not await _ended({threads}, deadline):
        return "worker threads were"
    return None


async def _ended(tasks: Collection[asyncio.Task[None]], deadline: float) -> bool:
    if not tasks:
        return True
    remaining = max(0.0, deadline - asyncio.get_running_loop().time())
    _, pending = await asyncio.wait(tasks, timeout=remaining)
    return not pending
