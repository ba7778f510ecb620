"""The arguments of `wymcp list`, `call` and `stats`, parsed without their HTTP client.

`wymcp stdio` and `check` build the same parser: the modules that run these
commands (and import aiohttp) load only when one of them is run.
"""

from __future__ import annotations

from typing import Any, Final

from wymcp.core.server import LEGACY, MODERN

OPERATOR_COMMANDS: Final = frozenset({"list", "call"})
"""The commands `_operator_commands.run` runs."""
TOKEN_VARIABLE: Final = "WYMCP_METRICS_TOKEN"  # noqa: S105 - a name, no secret
"""The environment variable `wymcp stats` reads when `--token` is not given."""


def add_operator_parsers(commands: Any) -> None:
    """Add `wymcp list` and `wymcp call` to the command's subparsers."""
    listing = commands.add_parser(
        "list", help="list the tools, resources and prompts of a served endpoint"
    )
    call = commands.add_parser("call", help="call a tool of a served endpoint")
    for command in (listing, call):
        command.add_argument(
            "url", metavar="URL", help="e.g. http://127.0.0.1:8000/mcp"
        )
    call.add_argument("tool", metavar="TOOL")
    call.add_argument(
        "action", metavar="ACTION", nargs="?", help="omit for a tool without actions"
    )
    call.add_argument(
        "--data",
        default="{}",
        metavar="JSON",
        help="the action's data (a plain tool's arguments) as a JSON object",
    )
    for command in (listing, call):
        command.add_argument(
            "--protocol",
            default=MODERN,
            choices=[MODERN, *LEGACY],
            help=f"the revision to speak (default: {MODERN})",
        )
        command.add_argument(
            "--header",
            action="append",
            default=[],
            metavar="'NAME: VALUE'",
            help="an extra HTTP header, e.g. 'Authorization: Bearer ...' (repeatable)",
        )
        command.add_argument(
            "--timeout", type=float, default=120.0, help="seconds to wait (default 120)"
        )
        command.add_argument(
            "--json", action="store_true", help="print the raw JSON-RPC result"
        )


def add_stats_parser(commands: Any) -> None:
    """Add `wymcp stats` to the command's subparsers."""
    stats = commands.add_parser(
        "stats", help="print the most refused tool calls of a running server"
    )
    stats.add_argument(
        "url", metavar="URL", help="its metrics, e.g. http://127.0.0.1:8000/metrics"
    )
    stats.add_argument("--top", type=int, default=20, help="rows to print (default 20)")
    stats.add_argument(
        "--token",
        help=(
            "the METRICS_TOKEN, if the server asks for one (default: the "
            f"{TOKEN_VARIABLE} environment variable, which other users cannot read)"
        ),
    )
    stats.add_argument(
        "--timeout", type=float, default=30.0, help="seconds to wait (default 30)"
    )
