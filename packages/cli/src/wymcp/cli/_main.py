"""The `wymcp` command: serve or check a settings module, and the small tools around it.

Problems with the settings are printed as one line each (id and fix), exit
status 1, never a traceback; the project is found in the current directory.
Each transport loads with the subcommand that needs it: `stdio` never loads aiohttp.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from wymcp.cli import _client_config, _reload
from wymcp.cli._http_arguments import (
    OPERATOR_COMMANDS,
    add_operator_parsers,
    add_stats_parser,
)
from wymcp.cli._installed_checks import installed_checks
from wymcp.cli._needs_http import needs_http
from wymcp.cli._settings_option import add_settings_option, project_on_path
from wymcp.cli._versions import VersionAction
from wymcp.conf import (
    describe_settings,
    print_problems,
    published_size,
    run_checks,
    served_engine,
    settings_for_command,
)
from wymcp.core.server import ECHO_LIMIT, TextLogFormatter


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
    add_operator_parsers(commands)
    add_stats_parser(commands)
    _client_config.add_parser(commands)
    return parser


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
    problems = run_checks(settings, checks=installed_checks())
    errors = sum(problem.is_error for problem in problems)
    if not errors and settings.TOOLS:
        engine, _ = served_engine(settings, runner="in_process")
        lines, _ = published_size(settings, engine)
        print("\n".join(lines), file=out)
    print_problems(problems, out)
    print(
        f"wymcp check: {errors} error(s), {len(problems) - errors} warning(s).",
        file=out,
    )
    return 1 if errors else 0


def serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Serve the settings module over HTTP until stopped; return the exit status."""
    overrides: dict[str, object] = {}
    if args.host is not None:
        overrides["HOST"] = args.host
    if args.port is not None:
        overrides["PORT"] = args.port
    settings = settings_for_command(args.settings, err, overrides)
    if settings is None:
        return 1
    from wymcp.transport.aiohttp import serve as serve_http  # noqa: PLC0415 - aiohttp for serve only

    return serve_http(settings, out=out, err=err)


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
    if args.command == "check":
        return check(args.settings, out, err, verbose=args.verbose)
    if args.command == "config":
        return _client_config.run(args, out, err)
    if args.command == "stdio":
        from wymcp.transport.stdio import run  # noqa: PLC0415 - see the docstring

        return run(args.settings)
    if not needs_http(args.command, err):
        return 1
    return _http_command(args.command)(args, out, err)


_Run = Callable[[argparse.Namespace, TextIO, TextIO], int]


def _http_command(command: str) -> _Run:
    """What runs an HTTP command; its module, and aiohttp, load only here."""
    if command == "dev":
        return _reload.dev
    if command == "stats":
        from wymcp.cli import _stats_command  # noqa: PLC0415 - loads aiohttp

        return _stats_command.run
    if command in OPERATOR_COMMANDS:
        from wymcp.cli import _operator_commands  # noqa: PLC0415 - loads aiohttp

        return _operator_commands.run
    return serve
