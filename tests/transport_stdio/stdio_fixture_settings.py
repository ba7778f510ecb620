"""The conformance fixture plus the stdio tests' own tools (`stdio_fixture_tools`)."""

from wymcp_conformance import settings as _conformance
from wymcp_conformance.settings import (  # noqa: F401 - re-exported settings
    INSTRUCTIONS,
    PROMPTS,
    RESOURCES,
    SERVER_NAME,
    SERVER_VERSION,
    STATE_SECRET,
)

TOOLS = [
    *_conformance.TOOLS,
    "stdio_fixture_tools.TwoQuestions",
    "stdio_fixture_tools.SampleThenRoots",
    "stdio_fixture_tools.Slow",
    "stdio_fixture_tools.Printer",
    "stdio_fixture_tools.Crash",
]
