"""wymcp.core.server: the MCP engine, on asyncio and without sockets.

It serves Streamable HTTP's model: a transport hands `Engine` an `Exchange`
per HTTP request and sends back the `Reply`, or the SSE events the engine
wrote to the request's `Stream`.
"""

from wymcp.core.gates import ECHO_LIMIT
from wymcp.core.schema import Prompt, PromptArgument, Resource, ResourceNotFoundError
from wymcp.core.server._authorization import InvalidToken, Principal, TokenValidator
from wymcp.core.server._challenge import BearerChallenge
from wymcp.core.server._client_key import client_key
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
from wymcp.core.server._encoded_json import EncodedJSON
from wymcp.core.server._engine import Engine
from wymcp.core.server._envelope import (
    mirrored_headers,
    request_meta,
    session_headers,
)
from wymcp.core.server._exchange import Exchange, Headers, Reply, Stream
from wymcp.core.server._header_names import (
    METHOD_HEADER,
    NAME_HEADER,
    PARAM_HEADER_PREFIX,
    SESSION_HEADER,
    VERSION_HEADER,
)
from wymcp.core.server._hint import Hint
from wymcp.core.server._json_policy import (
    BodyError,
    FastDecode,
    FastEncode,
    decode_by_policy,
    encode_json,
    nesting_depth,
)
from wymcp.core.server._jsonrpc import (
    ID_TEXT_LIMIT,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RETRY_AFTER,
    Held,
    answered_or_cancelled,
    echoable_id,
    error_message,
    is_asked_id,
    request_message,
    valid_id,
)
from wymcp.core.server._jwt_validator import JwtValidator
from wymcp.core.server._local_rates import LocalRates
from wymcp.core.server._log_text import TextLogFormatter
from wymcp.core.server._middleware import CallRecord, CallRefused, Middleware, Next
from wymcp.core.server._off_loop import OffLoopLane, yielding
from wymcp.core.server._options import EngineOptions
from wymcp.core.server._peer_group import peer_group
from wymcp.core.server._rate_limits import (
    CONCURRENCY_RETRY,
    RATE_LIMITED,
    RATE_METHODS,
    RateCheck,
    RateLimiter,
    RateRule,
    RateStore,
)
from wymcp.core.server._revision import (
    HANDSHAKE,
    LEGACY,
    META_CAPABILITIES,
    META_VERSION,
    MODERN,
    SUPPORTED,
    is_stateless,
)
from wymcp.core.server._served_engine import ServedEngine
from wymcp.core.server._session import (
    MemorySessionStore,
    Session,
    SessionStore,
    principal_key,
)
from wymcp.core.server._session_replay import REPLAY_BYTES
from wymcp.core.server._stream_resumable import EndsEarly, KeepsEvents
from wymcp.core.server._subscriptions import watch_cost
from wymcp.core.server._task_failure import TaskFailedError
from wymcp.core.server._task_store import (
    MemoryTaskStore,
    TaskEvents,
    TaskLimitError,
    TaskRecord,
    TaskStore,
    TaskStoreUnavailableError,
    task_charge,
    task_too_large,
)
from wymcp.core.server._tasks import EXTENSION as TASKS_EXTENSION
from wymcp.core.server._tool_context import (
    ClientRequestError,
    InputRequest,
    MissingCapabilityError,
    ToolContext,
)

__all__ = [
    "CONCURRENCY_RETRY",
    "ECHO_LIMIT",
    "HANDSHAKE",
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
    "RATE_LIMITED",
    "RATE_METHODS",
    "REPLAY_BYTES",
    "RETRY_AFTER",
    "SESSION_HEADER",
    "SUPPORTED",
    "TASKS_EXTENSION",
    "VERSION_HEADER",
    "BearerChallenge",
    "BodyError",
    "CallRecord",
    "CallRefused",
    "ClientRequestError",
    "Content",
    "EncodedJSON",
    "EndsEarly",
    "Engine",
    "EngineOptions",
    "Exchange",
    "FastDecode",
    "FastEncode",
    "Headers",
    "Held",
    "Hint",
    "InputRequest",
    "InvalidToken",
    "JwtValidator",
    "KeepsEvents",
    "LocalRates",
    "MemorySessionStore",
    "MemoryTaskStore",
    "Middleware",
    "MissingCapabilityError",
    "Next",
    "OffLoopLane",
    "Principal",
    "Prompt",
    "PromptArgument",
    "RateCheck",
    "RateLimiter",
    "RateRule",
    "RateStore",
    "Reply",
    "Resource",
    "ResourceNotFoundError",
    "ServedEngine",
    "Session",
    "SessionStore",
    "Stream",
    "TaskEvents",
    "TaskFailedError",
    "TaskLimitError",
    "TaskRecord",
    "TaskStore",
    "TaskStoreUnavailableError",
    "TextLogFormatter",
    "TokenValidator",
    "ToolContext",
    "ToolResult",
    "answered_or_cancelled",
    "audio",
    "client_key",
    "decode_by_policy",
    "echoable_id",
    "embedded_resource",
    "encode_json",
    "error_message",
    "image",
    "is_asked_id",
    "is_stateless",
    "mirrored_headers",
    "nesting_depth",
    "peer_group",
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
