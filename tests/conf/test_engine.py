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
        CALL_TIMEOUT=12,
        MAX_STREAMS=4,
    )
    engine = build_engine(settings)
    assert engine.options.call_timeout == 12.0
    assert engine.options.max_streams == 4
    options = engine.options
    assert (options.server_name, options.server_version) == ("demo", "2.0")
    assert options.instructions == "Be brief."
    assert options.strict is False
    assert options.protocol_versions == ("2026-07-28", "2025-11-25")
    assert (options.page_size, options.max_sessions) == (7, 3)
    assert options.session_idle_timeout == 60.0
    assert options.state_secret == b"z" * 32
    assert [spec.name for spec in engine.tool_specs] == ["echo"]


def test_the_engine_gets_the_task_settings():
    settings = load_settings(
        None,
        TOOLS=[Echo],
        TASK_TTL=90,
        TASK_POLL_INTERVAL=250,
        MAX_TASKS=40,
        MAX_TASKS_PER_PRINCIPAL=4,
    )
    options = build_engine(settings).options
    assert options.task_ttl == 90.0
    assert options.task_poll_interval_ms == 250
    assert (options.max_tasks, options.max_tasks_per_principal) == (40, 4)


def test_a_settings_value_built_directly_works():
    engine = build_engine(Settings(TOOLS=(Echo,)))
    assert [spec.name for spec in engine.tool_specs] == ["echo"]


def test_each_engine_gets_its_own_instance_of_a_tool_class():
    settings = Settings(TOOLS=(Echo,))
    first, second = build_engine(settings), build_engine(settings)
    (one,) = first.tool_specs
    (two,) = second.tool_specs
    assert isinstance(one.tool, Echo)
    assert isinstance(two.tool, Echo)
    assert one.tool is not two.tool


def test_a_broken_tool_raises_configuration_error():
    class Broken(Tool):
        name = "broken"
        description = "Nothing declared."

    with pytest.raises(ConfigurationError, match="broken"):
        build_engine(Settings(TOOLS=(Broken,)))


def test_a_wrong_scopes_declaration_fails_when_the_engine_is_built():
    class Scoped(Echo):
        name = "scoped"
        scopes = {"*": ["tasks:read"], "shout": ["x"], "say": "tasks:write"}  # noqa: RUF012 - the pinned declaration style

    with pytest.raises(ConfigurationError) as exc:
        build_engine(Settings(TOOLS=(Scoped,)))
    text = str(exc.value)
    assert "'scoped'" in text
    assert "'shout' is neither '*' nor an action of the tool (actions: say)" in text
    assert "scopes['say']: scopes must be a list of strings, not str" in text


def test_a_wrong_scopes_declaration_is_reported_by_the_checks():
    from wymcp.conf import run_checks

    class Scoped(Echo):
        name = "scoped"
        scopes = ["has space"]  # noqa: RUF012 - the pinned declaration style

    (problem,) = [p for p in run_checks(Settings(TOOLS=(Scoped,))) if p.is_error]
    assert problem.id == "wymcp.E006"
    assert "'has space' is not a scope" in problem.message


def test_the_engine_gets_the_settings_its_options_used_to_lack():
    settings = load_settings(
        None,
        SERVER_TITLE="Demo server",
        STATE_TTL=120,
        CLIENT_REQUEST_TIMEOUT=5,
        CACHE_TTL=60_000,
        CACHE_SCOPE="private",
    )
    options = build_engine(settings).options
    assert options.server_title == "Demo server"
    assert options.state_ttl == 120.0
    assert options.client_request_timeout == 5.0
    assert (options.ttl_ms, options.cache_scope) == (60_000, "private")
    defaults = build_engine(Settings()).options
    assert (defaults.state_ttl, defaults.client_request_timeout) == (600.0, 60.0)
    assert (defaults.ttl_ms, defaults.cache_scope, defaults.server_title) == (
        0,
        "public",
        None,
    )


def test_build_options_win_over_the_settings():
    options = build_engine(Settings(), page_size=3).options
    assert options.page_size == 3
