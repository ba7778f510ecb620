"""What a tool author imports, from one place: `wymcp.core.server.tools`.

The declarations (`Tool`, `action`, `Context`...) live in core-schema, the
answers and the side channel (`text`, `Hint`, `InputRequest`...) here in
core-server; this facade names both. `wymcp.core.server` is for transports.
"""

from wymcp.core.schema import (
    Action,
    Context,
    Description,
    Format,
    Ge,
    Gt,
    Le,
    Lt,
    MaxLen,
    MinLen,
    Pattern,
    Prompt,
    PromptArgument,
    Resource,
    ResourceNotFoundError,
    Tool,
    ToolError,
    action,
)
from wymcp.core.server._content import (
    ToolResult,
    audio,
    embedded_resource,
    image,
    resource_link,
    text,
)
from wymcp.core.server._hint import Hint
from wymcp.core.server._task_failure import TaskFailedError
from wymcp.core.server._tool_context import ClientRequestError, InputRequest

__all__ = [
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
