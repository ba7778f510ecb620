"""The `wymcp` command: serve or check a settings module, and the small tools around it.

Problems with the settings are printed as one line each, with their id and
the fix, and exit with status 1; never a traceback. `serve`, `check` and the
other commands that load settings find the project in the current directory.
"""

from __future__ import annotations

import argparse
import asyncio
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
    add_settings_option,
    build_engine,
    describe_settings,
    engine_for_command,
    loop_factory,
    print_problems,
    project_on_path,
    published_size,
    run_checks,
    settings_for_command,
)
from wymcp.core.server import ECHO_LIMIT, Engine, TextLogFormatter
from wymcp.transport.aiohttp import (
    _client_config,
    _operator_commands,
    _reload,
    _stats_command,
)
from wymcp.transport.aiohttp._access_log import use_json_logs
from wymcp.transport.aiohttp._runner import make_runner
from wymcp.transport.aiohttp._setup import get_endpoint, mount, served_engine
from wymcp.transport.aiohttp._versions import VersionAction

logger = logging.getLogger("wymcp.transport.aiohttp")

_UNWIND = 1.0
"""Seconds calls cancelled at the end of SHUTDOWN_GRACE get to end before the
process exits without them."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wymcp", description="Serve, check and reach wymcp servers."
    )
    parser.add_argument(
        "--version", action=VersionAction, help="print the installed versions and exit"
    )
    parser.add_argument(
        "-C",
        dest="directory",
        metavar="DIR",
        help="change to DIR first, as if wymcp were started there",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the MCP endpoint over HTTP")
    check = commands.add_parser("check", help="check the settings and exit")
    stdio = commands.add_parser("stdio", help="serve one client on stdin/stdout")
    for command in (serve, check, stdio):
        add_settings_option(command)
    check.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also list every setting and where its value came from",
    )
    serve.add_argument("--host", help="address to listen on (default: HOST)")
    serve.add_argument("--port", type=int, help="port to listen on (default: PORT)")
    _reload.add_parser(commands)
    _operator_commands.add_parsers(commands)
    _stats_command.add_parser(commands)
    _client_config.add_parser(commands)
    return parser


def banner(settings: Settings, engine: Engine) -> list[str]:
    """The lines `serve` prints once it listens: where, what it speaks and serves."""
    host = f"[{settings.HOST}]" if ":" in settings.HOST else settings.HOST
    tools = [spec.name for spec in engine.tool_specs] + ["help"]
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


def check(
    module: str | None, out: TextIO, err: TextIO, *, verbose: bool = False
) -> int:
    """Print every problem of the settings; return 1 if any is an error.

    With no error, first what `tools/list` publishes per tool and per action,
    in bytes and estimated tokens (bytes / 4).

    With `verbose`, first every setting's value and where it came from.
    """
    settings = settings_for_command(module, err)
    if settings is None:
        return 1
    if verbose:
        print("\n".join(describe_settings(settings)), file=out)
    problems = run_checks(settings)
    errors = sum(problem.is_error for problem in problems)
    if not errors and settings.TOOLS:
        lines, _ = published_size(settings, build_engine(settings))
        print("\n".join(lines), file=out)
    print_problems(problems, out)
    print(
        f"wymcp check: {errors} error(s), {len(problems) - errors} warning(s).",
        file=out,
    )
    return 1 if errors else 0


def serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Serve the settings module until SIGINT or SIGTERM; return the exit status."""
    overrides: dict[str, object] = {}
    if args.host is not None:
        overrides["HOST"] = args.host
    if args.port is not None:
        overrides["PORT"] = args.port
    settings = settings_for_command(args.settings, err, overrides)
    if settings is None:
        return 1
    if settings.LOG_FORMAT == "json":
        use_json_logs()
    built = engine_for_command(
        settings, served_engine, err, report=_log_problem, serving="http"
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `wymcp` command line; return the exit status."""
    args = _parser().parse_args(argv)
    stderr = logging.StreamHandler()
    stderr.setFormatter(TextLogFormatter())  # request values escaped (issue 27)
    logging.basicConfig(level=logging.INFO, handlers=[stderr])
    if args.directory is not None:
        try:
            os.chdir(args.directory)
        except OSError as exc:
            err = sys.stderr
            print(
                f"wymcp: cannot change to {args.directory[:ECHO_LIMIT]!r}: "
                f"{exc.strerror}",
                file=err,
            )
            return 2
    if hasattr(args, "settings"):
        project_on_path()
    return _run_command(args)


def _run_command(args: argparse.Namespace) -> int:
    """Hand the parsed arguments to the subcommand they name."""
    out, err = sys.stdout, sys.stderr
    tool = {
        "dev": _reload.dev,
        "stats": _stats_command.run,
        "config": _client_config.run,
    }.get(args.command)
    if tool is not None:
        return tool(args, out, err)
    if args.command in _operator_commands.COMMANDS:
        return _operator_commands.run(args, out, err)
    if args.command == "check":
        return check(args.settings, out, err, verbose=args.verbose)
    if args.command == "stdio":
        from wymcp.transport.stdio import run  # noqa: PLC0415 - only for stdio

        return run(args.settings)
    return serve(args, out, err)
