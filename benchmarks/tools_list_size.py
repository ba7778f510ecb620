"""What the demo's tools/list costs, as wymcp publishes it and one action per tool.

Prints a Markdown table (docs/tools.md): the demo (services/tasks) published with
`PUBLISH_SCHEMA = "compact"` and `"full"`, beside the same actions published as
peers do, one tool per action (named `tool_action`, the action's description, its
closed input schema and its output schema, the tool's annotations; no `help`).
Bytes are compact JSON of the `tools` array, tokens estimated as bytes / 4.

    .venv/bin/python benchmarks/tools_list_size.py
"""

from __future__ import annotations

import json
from typing import Any

from wymcp.conf import build_engine, load_settings
from wymcp.core.schema import action_output_schema

VERSION = "2026-07-28"


def size(value: object) -> int:
    """The UTF-8 bytes of `value` as compact JSON."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def published(mode: str) -> list[dict[str, Any]]:
    """The demo's tools/list entries with `PUBLISH_SCHEMA = mode`."""
    settings = load_settings("wymcp_tasks.settings", PUBLISH_SCHEMA=mode)
    return build_engine(settings).published_tools(VERSION)


def one_action_per_tool() -> list[dict[str, Any]]:
    """The demo's actions, each published as its own tool."""
    engine = build_engine(load_settings("wymcp_tasks.settings"))
    tools: list[dict[str, Any]] = []
    for spec in engine.tool_specs:
        for name in sorted(spec.actions):
            action = spec.actions[name]
            schema: dict[str, Any] = {
                "type": "object",
                "properties": dict(action.published.get("properties", {})),
                "additionalProperties": False,
            }
            if action.required:
                schema["required"] = list(action.required)
            tool: dict[str, Any] = {
                "name": f"{spec.name}_{name}",
                "description": action.action.description if action.action else "",
                "inputSchema": schema,
            }
            output = action_output_schema(spec.tool, name)
            if output is not None:
                tool["outputSchema"] = output
            annotations = getattr(spec.tool, "annotations", None)
            if annotations:
                tool["annotations"] = dict(annotations)
            tools.append(tool)
    return tools


def row(label: str, tools: list[dict[str, Any]]) -> str:
    total = size({"tools": tools})
    return f"| {label} | {len(tools)} | {total:,} | {-(-total // 4):,} |"


def main() -> None:
    print("| published as | tools | bytes | ~tokens (bytes / 4) |")
    print("|---|---|---|---|")
    print(row('wymcp, `PUBLISH_SCHEMA = "compact"`', published("compact")))
    print(row('wymcp, `PUBLISH_SCHEMA = "full"`', published("full")))
    print(row("one action per tool (as peers publish)", one_action_per_tool()))


if __name__ == "__main__":
    main()
