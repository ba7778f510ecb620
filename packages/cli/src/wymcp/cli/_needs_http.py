"""Whether the HTTP transport is installed, for the commands that need it.

`wymcp serve`, `dev`, `list`, `call` and `stats` speak HTTP; without the
`[http]` extra they say how to install it instead of failing on an import.
"""

from __future__ import annotations

import importlib.util
from typing import TextIO


def needs_http(command: str, err: TextIO) -> bool:
    """True if `wymcp.transport.aiohttp` can be imported; else print why not."""
    try:
        found = importlib.util.find_spec("wymcp.transport.aiohttp") is not None
    except ModuleNotFoundError:  # no wymcp.transport at all
        found = False
    if not found:
        print(
            f"wymcp {command}: needs the HTTP transport, which is not installed: "
            "pip install 'wymcp-cli[http]'",
            file=err,
        )
    return found
