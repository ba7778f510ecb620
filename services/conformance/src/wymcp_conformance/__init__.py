"""The fixture server the official MCP conformance suite drives.

Every `test_*` tool the suite names, a JSON Schema 2020-12 tool and `calc`, a
multi-action tool. Serve it with
`wymcp serve --settings wymcp_conformance.settings`.
"""

from wymcp_conformance._calc import Calc
from wymcp_conformance._client_request_tools import (
    Elicitation,
    ElicitationDefaults,
    ElicitationEnums,
    MissingCapability,
    Sampling,
    StreamingElicitation,
)
from wymcp_conformance._content_tools import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    MultipleContentTypes,
    SimpleText,
)
from wymcp_conformance._header_tool import XMcpHeader
from wymcp_conformance._notifying_tools import (
    ErrorHandling,
    LoggingTool,
    ToolWithLogging,
    ToolWithProgress,
)
from wymcp_conformance._schema_tool import JsonSchema202012

__all__ = [
    "AudioContent",
    "Calc",
    "Elicitation",
    "ElicitationDefaults",
    "ElicitationEnums",
    "EmbeddedResource",
    "ErrorHandling",
    "ImageContent",
    "JsonSchema202012",
    "LoggingTool",
    "MissingCapability",
    "MultipleContentTypes",
    "Sampling",
    "SimpleText",
    "StreamingElicitation",
    "ToolWithLogging",
    "ToolWithProgress",
    "XMcpHeader",
]
