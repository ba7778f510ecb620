"""Whether the HTTP transport is installed, for the commands that need it.

`wymcp serve`, `dev`, `list`, `call` and `stats` speak HTTP; without the
`[http]` extra they say how to install it instead of failing on an import.
"""

from __future__ import annotations

import importlib.util
from typing import TextIO


def http_installed() -> bool:
    """Whether `wymcp.transport.aiohttp` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec("wymcp.transport.aiohttp") is not None
    except ModuleNotFoundError:  # no wymcp.transport at all
        return False


def needs_http(command: str, err: TextIO) -> bool:
    """True if the HTTP transport is installed; else print how to install it."""
    found = http_installed()
    if not found:
        print(
            f"wymcp {command}: needs the HTTP transport, which is not installed: "
            "pip install 'wymcp-cli[http]'",
            file=err,
        )
    return found
