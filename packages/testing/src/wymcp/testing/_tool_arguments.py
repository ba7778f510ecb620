"""The arguments of a test client's tools/call, and the client it says it is.

The rest of a request's envelope (`_meta`, mirrored and session headers) is
built by `wymcp.core.server`, as every wymcp client builds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata
from typing import Any, Final

CLIENT_INFO: Final = {
    "name": "wymcp-testing",
    "version": metadata.version("wymcp-testing"),
}
"""The installed release's version: a test client says which wymcp it is."""


def tool_arguments(
    action: str | None,
    data: Mapping[str, Any] | None,
    arguments: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The `arguments` of a tools/call: `{action, data}`, or `arguments` as given.

    A multi-action call without data sends no `data` key (the server reads
    `{}`); a plain tool takes `data` (or `arguments`) as its whole arguments.
    """
    if arguments is not None:
        if action is not None or data is not None:
            raise TypeError("pass either action/data or arguments, not both")
        return dict(arguments)
    if action is None:
        return dict(data or {})
    shaped: dict[str, Any] = {"action": action}
    if data is not None:
        shaped["data"] = data
    return shaped
