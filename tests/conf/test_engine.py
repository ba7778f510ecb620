"""build_engine: settings become the engine's options and tools."""

from __future__ import annotations

from typing import Any

import pytest

from wymcp.conf import Settings, build_engine, load_settings
from wymcp.core.schema import Action, ConfigurationError, Tool


class Echo(Tool):
    name = "echo"
    description = "Echo things."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "say": Action(
            description="Say it back", properties={"text": {"type": "string"}}
        )
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        return data


def test_the_engine_gets_the_settings():
    settings = load_settings(
        None,
        TOOLS=[Echo],
        SERVER_NAME="demo",
        SERVER_VERSION="2.0",
        INSTRUCTIONS="Be brief.",
        STRICT=False,
        PROTOCOL_VERSIONS=["2025-11-25", "2026-07-28"],
        PAGE_SIZE=7,
        MAX_SESSIONS=3,
        SESSION_IDLE_TIMEOUT=60,
        STATE_SECRET="z" * 32,
    )
    engine = build_engine(settings)
    options = engine.options
    assert (options.server_name, options.server_version) == ("demo", "2.0")
    assert options.instructions == "Be brief."
    assert options.strict is False
    assert options.protocol_versions == ("2026-07-28", "2025-11-25")
    assert (options.page_size, options.max_sessions) == (7, 3)
    assert options.session_idle_timeout == 60.0
    assert options.state_secret == b"z" * 32
    assert [spec.name for spec in engine.tool_specs] == ["echo"]


def test_a_settings_value_built_directly_works():
    engine = build_engine(Settings(TOOLS=(Echo,)))
    assert [spec.name for spec in engine.tool_specs] == ["echo"]


def test_a_broken_tool_raises_configuration_error():
    class Broken(Tool):
        name = "broken"
        description = "Nothing declared."

    with pytest.raises(ConfigurationError, match="broken"):
        build_engine(Settings(TOOLS=(Broken,)))
