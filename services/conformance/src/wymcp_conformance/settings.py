"""Settings of the conformance fixture (`--settings wymcp_conformance.settings`).

`test_x_mcp_header` comes first: the suite's header scenarios use the first
tool in `tools/list` (and the first with an annotated string property).
"""

TOOLS = [
    "wymcp_conformance.XMcpHeader",
    "wymcp_conformance.SimpleText",
    "wymcp_conformance.ImageContent",
    "wymcp_conformance.AudioContent",
    "wymcp_conformance.EmbeddedResource",
    "wymcp_conformance.MultipleContentTypes",
    "wymcp_conformance.ErrorHandling",
    "wymcp_conformance.ToolWithProgress",
    "wymcp_conformance.ToolWithLogging",
    "wymcp_conformance.LoggingTool",
    "wymcp_conformance.Sampling",
    "wymcp_conformance.Elicitation",
    "wymcp_conformance.ElicitationDefaults",
    "wymcp_conformance.ElicitationEnums",
    "wymcp_conformance.MissingCapability",
    "wymcp_conformance.StreamingElicitation",
    "wymcp_conformance.InputRequiredElicitation",
    "wymcp_conformance.InputRequiredSampling",
    "wymcp_conformance.InputRequiredListRoots",
    "wymcp_conformance.InputRequiredRequestState",
    "wymcp_conformance.InputRequiredMultipleInputs",
    "wymcp_conformance.InputRequiredMultiRound",
    "wymcp_conformance.InputRequiredTamperedState",
    "wymcp_conformance.InputRequiredCapabilities",
    "wymcp_conformance.TriggerToolChange",
    "wymcp_conformance.TriggerPromptChange",
    "wymcp_conformance.JsonSchema202012",
    "wymcp_conformance.Calc",
    "wymcp_conformance.Greet",
    "wymcp_conformance.SlowCompute",
    "wymcp_conformance.FailingJob",
    "wymcp_conformance.ProtocolErrorJob",
    "wymcp_conformance.ConfirmDelete",
    "wymcp_conformance.MultiInput",
    "wymcp_conformance.ToolWithTask",
    "wymcp_conformance.Reconnection",
]

RESOURCES = [
    "wymcp_conformance.StaticText",
    "wymcp_conformance.StaticBinary",
    "wymcp_conformance.TemplateData",
    "wymcp_conformance.WatchedResource",
]

PROMPTS = [
    "wymcp_conformance.SimplePrompt",
    "wymcp_conformance.PromptWithArguments",
    "wymcp_conformance.PromptWithEmbeddedResource",
    "wymcp_conformance.PromptWithImage",
    "wymcp_conformance.InputRequiredPrompt",
]

SERVER_NAME = "wymcp-conformance"
SERVER_VERSION = "0.1.0"
INSTRUCTIONS = "The fixture the official MCP conformance suite drives."
# A fixed key so sealed request state survives a restart of the fixture.
STATE_SECRET = "wymcp-conformance-fixture-state-key-not-a-secret"  # noqa: S105 - a test fixture's key, public on purpose
