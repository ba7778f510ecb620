"""The `wymcp` command: serve, stdio, check, list, call, stats, config, dev.

`main(argv)` runs it and returns the exit status. Each subcommand imports the
transport it needs when it runs: `wymcp stdio` never loads aiohttp, and
`serve` needs the `[http]` extra.
"""

from wymcp.cli._main import main

__all__ = ["main"]
