"""The author's facade, wymcp.core.server.tools: exactly its sorted __all__, each
name the very object its home package exports (the old import paths still work)."""

from __future__ import annotations

import wymcp.core.schema
import wymcp.core.server
from wymcp.core.server import tools

EXPECTED = [
    "Action",
    "ClientRequestError",
    "Context",
    "Description",
    "Format",
    "Ge",
    "Gt",
    "Hint",
    "InputRequest",
    "Le",
    "Lt",
    "MaxLen",
    "MinLen",
    "Pattern",
    "Prompt",
    "PromptArgument",
    "Resource",
    "ResourceNotFoundError",
    "TaskFailedError",
    "Tool",
    "ToolError",
    "ToolResult",
    "action",
    "audio",
    "embedded_resource",
    "image",
    "resource_link",
    "text",
]


def test_the_authors_facade_exports_exactly_its_pinned_names() -> None:
    assert tools.__all__ == EXPECTED
    public = {n for n in vars(tools) if not n.startswith("_")} - {"annotations"}
    assert public == set(EXPECTED)


def test_each_name_is_the_object_its_old_import_path_gives() -> None:
    for name in EXPECTED:
        home = (
            wymcp.core.schema
            if name in wymcp.core.schema.__all__
            else wymcp.core.server
        )
        assert getattr(tools, name) is getattr(home, name), name


def test_the_names_the_guides_promise_are_all_there() -> None:
    promised = {
        "Tool", "Action", "action", "Context", "ToolError", "Prompt", "Resource",
        "text", "image", "Hint", "InputRequest", "ClientRequestError",
        "TaskFailedError",
    }  # fmt: skip
    assert promised <= set(tools.__all__)
