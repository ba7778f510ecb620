"""wymcp.core.server: the sans-I/O MCP engine.

A transport hands `Engine` an `Exchange` per HTTP request and sends back the
`Reply`, or the SSE events the engine wrote to the request's `Stream`.
"""

from wymcp.core.schema import Prompt, PromptArgument, Resource, ResourceNotFoundError
from wymcp.core.server._authorization import InvalidToken, Principal, TokenValidator
from wymcp.core.server._content import (
    Content,
    ToolResult,
    audio,
    embedded_resource,
    image,
    resource_contents,
    resource_link,
    text,
)
from wymcp.core.server._context import (
    ClientRequestError,
    InputRequest,
    MissingCapabilityError,
    ToolContext,
)
from wymcp.core.server._engine import Engine
from wymcp.core.server._exchange import Exchange, Headers, Reply, Stream
from wymcp.core.server._hint import Hint
from wymcp.core.server._options import EngineOptions
from wymcp.core.server._revision import LEGACY, MODERN, SUPPORTED
from wymcp.core.server._session import MemorySessionStore, Session, SessionStore
from wymcp.core.server._task_failure import TaskFailedError
from wymcp.core.server._task_store import MemoryTaskStore, TaskRecord, TaskStore
from wymcp.core.server._tasks import EXTENSION as TASKS_EXTENSION

__all__ = [
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
