"""What `tools/list` costs a model: bytes and estimated tokens per tool and action.

`wymcp check` prints the lines and warns (W017) above `TOOLS_LIST_BUDGET`.
Tokens are estimated as the compact JSON's UTF-8 bytes / 4, rounded up.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from wymcp.conf._problems import WARNING, CheckMessage

if TYPE_CHECKING:
    from wymcp.core.server import Engine

TOOLS_LIST_OVER_BUDGET = "wymcp.W017"
BYTES_PER_TOKEN = 4


def published_bytes(value: object) -> int:
    """The UTF-8 bytes of `value` as compact JSON (as the engine writes it)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode())


def estimated_tokens(size: int) -> int:
    """The estimated tokens of `size` bytes of JSON: bytes / 4, rounded up."""
    return -(-size // BYTES_PER_TOKEN)


def _measure(size: int) -> str:
    return f"{size:,} bytes (~{estimated_tokens(size):,} tokens)"


def _action_bytes(tool: dict[str, Any]) -> dict[str, int]:
    """Each action's own share: its `oneOf` branch, or its summary line.

    In the compact form an action also has its entry in `data`'s description.
    """
    schema = tool.get("inputSchema", {})
    branches = schema.get("oneOf") if isinstance(schema, dict) else None
    shares: dict[str, int] = {}
    if isinstance(branches, list):
        for branch in branches:
            name = branch.get("properties", {}).get("action", {}).get("const")
            if isinstance(name, str):
                shares[name] = published_bytes(branch)
        return shares
    action = schema.get("properties", {}).get("action", {})
    if "enum" not in action:
        return shares
    for line in str(action.get("description", "")).splitlines():
        name, _, _ = line.partition(":")
        shares[name] = len(line.encode()) + 1
    return shares


def tools_list_report(
    engine: Engine, version: str, budget: int
) -> tuple[list[str], list[CheckMessage]]:
    """The size lines of what `engine` publishes to `version`, and W017 if over."""
    tools = engine.published_tools(version)
    total = published_bytes({"tools": tools})
    lines = [f"tools/list ({version}): {_measure(total)}, budget {budget:,} tokens"]
    for tool in tools:
        lines.append(f"  {tool['name']}: {_measure(published_bytes(tool))}")
        lines.extend(
            f"    {tool['name']}.{name}: {_measure(size)}"
            for name, size in sorted(_action_bytes(tool).items())
        )
    if estimated_tokens(total) <= budget:
        return lines, []
    warning = CheckMessage(
        WARNING,
        TOOLS_LIST_OVER_BUDGET,
        f"tools/list takes {_measure(total)}, above TOOLS_LIST_BUDGET "
        f"({budget:,} tokens); every conversation with this server pays it.",
        "Merge related tools into one multi-action tool, shorten descriptions, "
        'keep PUBLISH_SCHEMA = "compact", or raise TOOLS_LIST_BUDGET.',
    )
    return lines, [warning]
