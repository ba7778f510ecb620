"""`wymcp config claude|cursor|vscode`: the JSON that registers a server in a client.

Without `--url` the client launches `wymcp -C <project> stdio --settings M`
with the absolute path of this `wymcp`; with `--url` it connects over HTTP
(Claude Desktop through the `mcp-remote` bridge). The JSON goes to stdout,
where to paste it to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Final, TextIO

from wymcp.cli._settings_option import add_settings_option
from wymcp.conf import ENVIRONMENT_VARIABLE, settings_for_command
from wymcp.core.server import ECHO_LIMIT

MCP_REMOTE: Final = "mcp-remote@0.15.1"
CLIENTS: Final = ("claude", "cursor", "vscode")
WHERE: Final = {
    "claude": "the mcpServers of claude_desktop_config.json (macOS: ~/Library/"
    "Application Support/Claude/, Windows: %APPDATA%\\Claude\\), then restart Claude",
    "cursor": "the mcpServers of ~/.cursor/mcp.json or .cursor/mcp.json in a project",
    "vscode": "the servers of .vscode/mcp.json in the workspace"
    " (or MCP: Open User Configuration)",
}


def add_parser(commands: Any) -> None:
    """Add `wymcp config` to the command's subparsers."""
    config = commands.add_parser(
        "config", help="print the JSON that registers the server in a desktop client"
    )
    config.add_argument("client", choices=CLIENTS)
    add_settings_option(config)
    config.add_argument(
        "--url", help="connect to this served URL instead of launching over stdio"
    )
    config.add_argument(
        "--name", help="the server's name in the client (default: the project's)"
    )
    config.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable the client sets for the server (repeatable)",
    )


def wymcp_executable() -> str:
    """The absolute path of the `wymcp` script of this interpreter's environment."""
    beside = Path(sys.executable).parent / "wymcp"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside.absolute())
    found = shutil.which("wymcp")
    if found is None:
        raise LookupError("no `wymcp` executable found beside Python or on PATH")
    return str(Path(found).absolute())


def server_entry(
    client: str,
    *,
    settings: str | None,
    url: str | None,
    project: str,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One server's entry in `client`'s configuration."""
    if url is not None:
        if client == "claude":
            return {"command": "npx", "args": ["-y", MCP_REMOTE, url]}
        if client == "vscode":
            return {"type": "http", "url": url}
        return {"url": url}
    if settings is None:
        raise ValueError("a stdio entry needs the settings module")
    entry: dict[str, Any] = {
        "command": wymcp_executable(),
        "args": ["-C", project, "stdio", "--settings", settings],
    }
    if env:
        entry["env"] = dict(env)
    return {"type": "stdio", **entry} if client == "vscode" else entry


def snippet(client: str, name: str, entry: dict[str, Any]) -> dict[str, Any]:
    """The whole JSON document: the client's top-level key around the entry."""
    return {"servers" if client == "vscode" else "mcpServers": {name: entry}}


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Print the snippet for `args.client`; return the exit status."""
    module = args.settings or os.environ.get(ENVIRONMENT_VARIABLE)
    if module is None and args.url is None:
        print(
            "wymcp config: pass --settings myproject.settings (the client launches"
            " the server over stdio) or --url http://host:port/mcp.",
            file=err,
        )
        return 1
    if (
        module is not None
        and args.url is None
        and settings_for_command(module, err, command="wymcp config") is None
    ):
        return 1
    env: dict[str, str] = {}
    for pair in args.env:
        key, equals, value = pair.partition("=")
        if not equals or not key:
            print(
                f"wymcp config: --env {pair[:ECHO_LIMIT]!r} is not NAME=VALUE.",
                file=err,
            )
            return 1
        env[key] = value
    if env and args.url is not None:
        print("wymcp config: --env is for a launched server, not --url.", file=err)
        return 1
    name = args.name or (module.split(".")[0] if module else "wymcp")
    try:
        entry = server_entry(
            args.client,
            settings=module,
            url=args.url,
            project=str(Path.cwd()),
            env=env,
        )
    except LookupError as exc:
        print(f"wymcp config: {exc}", file=err)
        return 1
    print(json.dumps(snippet(args.client, name, entry), indent=2), file=out)
    print(f"wymcp config: add the entry to {WHERE[args.client]}.", file=err)
    return 0
