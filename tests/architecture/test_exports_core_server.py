"""The public surface of wymcp.core.server is exactly its sorted __all__."""

from __future__ import annotations

from wymcp.core import server

EXPECTED = [
    "LEGACY",
    "MODERN",
    "SUPPORTED",
    "TASKS_EXTENSION",
    "ClientRequestError",
    "Content",
    "Engine",
    "EngineOptions",
    "Exchange",
    "Headers",
    "Hint",
    "InputRequest",
    "InvalidToken",
    "MemorySessionStore",
    "MemoryTaskStore",
    "MissingCapabilityError",
    "Principal",
    "Prompt",
    "PromptArgument",
    "Reply",
    "Resource",
    "ResourceNotFoundError",
    "Session",
    "SessionStore",
    "Stream",
    "TaskFailedError",
    "TaskRecord",
    "TaskStore",
    "TokenValidator",
    "ToolContext",
    "ToolResult",
    "audio",
    "embedded_resource",
    "image",
    "resource_contents",
    "resource_link",
    "text",
]


def test_all_is_pinned_and_sorted() -> None:
    assert server.__all__ == EXPECTED
    assert server.__all__ == sorted(
        server.__all__, key=lambda n: (not n.isupper(), not n[0].isupper(), n)
    )


def test_every_exported_name_exists() -> None:
    for name in server.__all__:
        assert getattr(server, name) is not None
