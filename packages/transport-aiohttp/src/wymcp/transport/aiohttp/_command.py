"""The `wymcp` command: `wymcp serve` runs a settings module, `wymcp check` checks it.

Problems with the settings are printed as one line each, with their id and
the fix, and exit with status 1; never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Sequence
from typing import TextIO

from aiohttp import web
from wymcp.conf import (
    ENVIRONMENT_VARIABLE,
    CheckMessage,
    ImproperlyConfigured,
    Settings,
    build_engine,
    load_settings,
    run_checks,
)
from wymcp.transport.aiohttp._runner import make_runner
from wymcp.transport.aiohttp._setup import mount

logger = logging.getLogger("wymcp.transport.aiohttp")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wymcp", description="Serve or check a wymcp settings module."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the MCP endpoint over HTTP")
    check = commands.add_parser("check", help="check the settings and exit")
    stdio = commands.add_parser("stdio", help="serve one client on stdin/stdout")
    for command in (serve, check, stdio):
        command.add_argument(
            "--settings",
            metavar="MODULE",
            help=f"the settings module (default: ${ENVIRONMENT_VARIABLE})",
        )
    serve.add_argument("--host", help="address to listen on (default: HOST)")
    serve.add_argument("--port", type=int, help="port to listen on (default: PORT)")
    return parser


def _print_problems(problems: Sequence[CheckMessage], out: TextIO) -> None:
    for problem in problems:
        print(str(problem), file=out)


def _load(
    module: str | None, overrides: dict[str, object], err: TextIO
) -> Settings | None:
    name = module or os.environ.get(ENVIRONMENT_VARIABLE)
    if not name:
        print(
            "wymcp: no settings module. Pass --settings myproject.settings or set "
            f"{ENVIRONMENT_VARIABLE}=myproject.settings.",
            file=err,
        )
        return None
    try:
        return load_settings(name, **overrides)
    except ImproperlyConfigured as exc:
        print(f"wymcp: the settings module {name!r} cannot be used:", file=err)
        _print_problems(exc.problems, err)
        return None


def check(module: str | None, out: TextIO, err: TextIO) -> int:
    """Print every problem of the settings; return 1 if any is an error."""
    settings = _load(module, {}, err)
    if settings is None:
        return 1
    problems = run_checks(settings)
    _print_problems(problems, out)
    errors = sum(problem.is_error for problem in problems)
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
    settings = _load(args.settings, overrides, err)
    if settings is None:
        return 1
    problems = run_checks(settings)
    for problem in problems:
        (logger.error if problem.is_error else logger.warning)("%s", problem)
    if any(problem.is_error for problem in problems):
        print("wymcp: fix the errors above (see `wymcp check`).", file=err)
        return 1
    try:
        engine = build_engine(settings)
    except Exception as exc:  # noqa: BLE001 - a declaration problem, told plainly
        print(f"wymcp: the server cannot be built: {str(exc)[:2000]}", file=err)
        return 1
    app = web.Application()
    mount(app, settings, engine)
    host = f"[{settings.HOST}]" if ":" in settings.HOST else settings.HOST
    tools = [spec.name for spec in engine.tool_specs] + ["help"]
    banner = [
        f"wymcp serving http://{host}:{settings.PORT}{settings.PATH}",
        f"  revisions: {', '.join(settings.PROTOCOL_VERSIONS)}",
        f"  tools: {', '.join(tools)}",
        "  stop with Ctrl-C",
    ]
    try:
        asyncio.run(_serve_until_stopped(app, settings, banner, out))
    except OSError as exc:
        print(
            f"wymcp: cannot listen on {host}:{settings.PORT}: {exc.strerror or exc}. "
            "Choose another --port or stop the other server.",
            file=err,
        )
        return 1
    logger.info("wymcp stopped")
    return 0


async def _serve_until_stopped(
    app: web.Application, settings: Settings, banner: list[str], out: TextIO
) -> None:
    """Listen until SIGINT or SIGTERM, then let calls in flight finish.

    The runner (`make_runner`) applies HEADER_TIMEOUT, MAX_CONNECTIONS,
    SHUTDOWN_GRACE and handler cancellation.
    """
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    access_log = logging.getLogger("aiohttp.access") if settings.ACCESS_LOG else None
    runner = make_runner(app, settings, access_log=access_log)
    await runner.setup()
    try:
        await web.TCPSite(runner, settings.HOST, settings.PORT).start()
        print("\n".join(banner), file=out, flush=True)
        await stop.wait()
    finally:
        await runner.cleanup()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `wymcp` command line; return the exit status."""
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if args.command == "check":
        return check(args.settings, sys.stdout, sys.stderr)
    if args.command == "stdio":
        from wymcp.transport.stdio import run  # noqa: PLC0415 - only for stdio

        return run(args.settings)
    return serve(args, sys.stdout, sys.stderr)
