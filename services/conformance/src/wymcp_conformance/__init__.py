"""The fixture server the official MCP conformance suite drives.

Every `test_*` tool, resource and prompt the suite names, the diagnostic tools
of its stateless scenario, a JSON Schema 2020-12 tool and `calc`, a
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
from wymcp_conformance._input_required_tools import (
    InputRequiredCapabilities,
    InputRequiredElicitation,
    InputRequiredListRoots,
    InputRequiredMultipleInputs,
    InputRequiredMultiRound,
    InputRequiredRequestState,
    InputRequiredSampling,
    InputRequiredTamperedState,
)
from wymcp_conformance._list_change_tools import (
    DynamicPrompt,
    DynamicTool,
    TriggerPromptChange,
    TriggerToolChange,
)
from wymcp_conformance._notifying_tools import (
    ErrorHandling,
    LoggingTool,
    Reconnection,
    ToolWithLogging,
    ToolWithProgress,
)
from wymcp_conformance._prompts import (
    InputRequiredPrompt,
    PromptWithArguments,
    PromptWithEmbeddedResource,
    PromptWithImage,
    SimplePrompt,
)
from wymcp_conformance._resources import (
    StaticBinary,
    StaticText,
    TemplateData,
    WatchedResource,
)
from wymcp_conformance._schema_tool import JsonSchema202012
from wymcp_conformance._task_tools import (
    ConfirmDelete,
    FailingJob,
    Greet,
    MultiInput,
    ProtocolErrorJob,
    SlowCompute,
    ToolWithTask,
)

__all__ = [
    "AudioContent",
    "Calc",
    "ConfirmDelete",
    "DynamicPrompt",
    "DynamicTool",
    "Elicitation",
    "ElicitationDefaults",
    "ElicitationEnums",
    "EmbeddedResource",
    "ErrorHandling",
    "FailingJob",
    "Greet",
    "ImageContent",
    "InputRequiredCapabilities",
    "InputRequiredElicitation",
    "InputRequiredListRoots",
    "InputRequiredMultiRound",
    "InputRequiredMultipleInputs",
    "InputRequiredPrompt",
    "InputRequiredRequestState",
    "InputRequiredSampling",
    "InputRequiredTamperedState",
    "JsonSchema202012",
    "LoggingTool",
    "MissingCapability",
    "MultiInput",
    "MultipleContentTypes",
    "PromptWithArguments",
    "PromptWithEmbeddedResource",
    "PromptWithImage",
    "ProtocolErrorJob",
    "Reconnection",
    "Sampling",
    "SimplePrompt",
    "SimpleText",
    "SlowCompute",
    "StaticBinary",
    "StaticText",
    "StreamingElicitation",
    "TemplateData",
    "ToolWithLogging",
    "ToolWithProgress",
    "ToolWithTask",
    "TriggerPromptChange",
    "TriggerToolChange",
    "WatchedResource",
    "XMcpHeader",
]
