"""The public surface of wymcp.core.server is exactly its sorted __all__."""

from __future__ import annotations

from wymcp.core import server

EXPECTED = [
    "ECHO_LIMIT",
    "ID_TEXT_LIMIT",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LEGACY",
    "META_CAPABILITIES",
    "META_VERSION",
    "METHOD_HEADER",
    "METHOD_NOT_FOUND",
    "MODERN",
    "NAME_HEADER",
    "PARAM_HEADER_PREFIX",
    "PARSE_ERROR",
    "REPLAY_BYTES",
    "RETRY_AFTER",
    "SESSION_HEADER",
    "SUPPORTED",
    "TASKS_EXTENSION",
    "VERSION_HEADER",
    "BearerChallenge",
    "BodyError",
    "ClientRequestError",
    "Content",
    "EncodedJSON",
    "Engine",
    "EngineOptions",
    "Exchange",
    "FastDecode",
    "FastEncode",
    "Headers",
    "Hint",
    "InputRequest",
    "InvalidToken",
    "JwtValidator",
    "MemorySessionStore",
    "MemoryTaskStore",
    "MissingCapabilityError",
    "OffLoopLane",
    "Principal",
    "Prompt",
    "PromptArgument",
    "Reply",
    "Resource",
    "ResourceNotFoundError",
    "Session",
    "SessionStore",
    "Stream",
    "TaskEvents",
    "TaskFailedError",
    "TaskLimitError",
    "TaskRecord",
    "TaskStore",
    "TaskStoreUnavailableError",
    "TokenValidator",
    "ToolContext",
    "ToolResult",
    "audio",
    "decode_json",
    "echoable_id",
    "embedded_resource",
    "encode_json",
    "error_message",
    "image",
    "is_stateless",
    "mirrored_headers",
    "nesting_depth",
    "principal_key",
    "request_message",
    "request_meta",
    "resource_contents",
    "resource_link",
    "session_headers",
    "task_charge",
    "task_too_large",
    "text",
    "valid_id",
    "watch_cost",
    "yielding",
]


def test_all_is_pinned_and_sorted() -> None:
    assert server.__all__ == EXPECTED
    assert server.__all__ == sorted(
        server.__all__, key=lambda n: (not n.isupper(), not n[0].isupper(), n)
    )


def test_every_exported_name_exists() -> None:
    for name in server.__all__:
        assert getattr(server, name) is not None
