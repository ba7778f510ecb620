"""The conformance fixture's facade: a sorted `__all__` whose every name exists."""

import importlib

import wymcp_conformance

EXPECTED = [
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


def test_the_facade_exports_exactly_the_public_names() -> None:
    assert wymcp_conformance.__all__ == EXPECTED
    assert sorted(wymcp_conformance.__all__) == wymcp_conformance.__all__


def test_every_exported_name_exists() -> None:
    for name in wymcp_conformance.__all__:
        assert hasattr(wymcp_conformance, name), name


def test_the_settings_module_names_only_settings() -> None:
    settings = importlib.import_module("wymcp_conformance.settings")
    names = {name for name in vars(settings) if not name.startswith("_")}
    assert all(name.isupper() for name in names), names
    assert settings.TOOLS[0] == "wymcp_conformance.XMcpHeader"
