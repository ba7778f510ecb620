"""The official MCP schemas as a test oracle.

Which schema definition answers each method, and a validator for one
definition of a revision's vendored `mcp-schema/<revision>/schema.json`.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

SCHEMAS = Path(__file__).resolve().parent / "mcp-schema"
MODERN = "2026-07-28"

RESULTS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "logging/setLevel": "EmptyResult",
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "subscriptions/listen": "SubscriptionsListenResult",
}
REQUESTS = {
    "elicitation/create": "ElicitRequest",
    "sampling/createMessage": "CreateMessageRequest",
    "roots/list": "ListRootsRequest",
}


@cache
def _schema(revision: str) -> dict[str, Any]:
    folder = MODERN if revision == MODERN else "2025-11-25"
    return json.loads((SCHEMAS / folder / "schema.json").read_text(encoding="utf-8"))


@cache
def validator(revision: str, definition: str) -> jsonschema.Draft202012Validator:
    """A validator for one definition of a revision's official schema."""
    schema = dict(_schema(revision))
    schema["$ref"] = f"#/$defs/{definition}"
    return jsonschema.Draft202012Validator(schema)
