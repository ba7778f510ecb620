"""What every command serving a settings module shares: load, check, build, report."""

from __future__ import annotations

import io
from typing import Any

import pytest

from wymcp.conf import (
    ENVIRONMENT_VARIABLE,
    CheckMessage,
    Settings,
    build_engine,
    engine_for_command,
    run_checks,
    settings_for_command,
)
from wymcp.core.schema import Action, Tool
from wymcp.core.server import Engine


def test_no_module_is_named_the_way_to_name_one(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    err = io.StringIO()
    assert settings_for_command(None, err, command="wymcp config") is None
    assert err.getvalue() == (
        "wymcp config: no settings module. Pass --settings myproject.settings or "
        f"set {ENVIRONMENT_VARIABLE}=myproject.settings.\n"
    )


def test_the_environment_names_the_module_and_overrides_apply(
    settings_module, monkeypatch
):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, settings_module("PORT = 9000\n"))
    err = io.StringIO()
    settings = settings_for_command(None, err, {"HOST": "::1"})
    assert settings is not None
    assert (settings.PORT, settings.HOST, err.getvalue()) == (9000, "::1", "")


def test_a_module_that_cannot_be_used_is_told_with_each_problem(settings_module):
    err = io.StringIO()
    assert settings_for_command(settings_module("PORT = 'x'\n"), err) is None
    first, *problems = err.getvalue().splitlines()
    assert first.startswith("wymcp: the settings module 'wymcp_test_settings_")
    assert first.endswith("' cannot be used:")
    assert problems
    assert problems[0].startswith("wymcp.E")


def test_a_settings_error_stops_before_building():
    built: list[Settings] = []
    err = io.StringIO()
    reported: list[CheckMessage] = []
    broken = Settings().evolve(BROKER="redis://127.0.0.1:6379/0")  # E008: no secret
    assert engine_for_command(broken, built.append, err, report=reported.append) is None
    assert [p.id for p in reported if p.is_error] == ["wymcp.E008"]
    assert err.getvalue() == "wymcp: fix the errors above (see `wymcp check`).\n"
    assert built == []


def test_declarations_that_cannot_be_served_are_the_checks_e006():
    err = io.StringIO()
    reported: list[CheckMessage] = []
    broken = Settings(TOOLS=(42,))
    assert engine_for_command(broken, build_engine, err, report=reported.append) is None
    (problem,) = [p for p in reported if p.is_error]
    (checked,) = [p for p in run_checks(broken) if p.is_error]
    assert problem == checked
    assert problem.id == "wymcp.E006"
    assert err.getvalue() == "wymcp: fix the errors above (see `wymcp check`).\n"


def test_warnings_are_printed_and_the_engine_built():
    err = io.StringIO()
    engine = engine_for_command(Settings(), build_engine, err)
    assert isinstance(engine, Engine)
    assert [line.split(" ")[0] for line in err.getvalue().splitlines()] == [
        "wymcp.W002",
        "wymcp.W005",
    ]


@pytest.mark.parametrize(
    ("serving", "host", "warned"),
    [
        (None, "127.0.0.1", True),  # wymcp check, GunicornWorker: may be many
        ("stdio", "127.0.0.1", False),  # one process, one client
        ("stdio", "0.0.0.0", False),  # noqa: S104 - HOST does not apply to stdio
        ("http", "127.0.0.1", False),  # wymcp serve on loopback: alone
        ("http", "::1", False),
        ("http", "0.0.0.0", True),  # noqa: S104 - may be one host of many
        ("http", "mcp.example.com", True),
    ],
)
def test_w002_is_left_out_where_no_other_process_can_matter(serving, host, warned):
    err = io.StringIO()
    settings = Settings().evolve(HOST=host, ALLOWED_HOSTS=["mcp.example.com"])
    assert engine_for_command(settings, build_engine, err, serving=serving)
    ids = [line.split(" ")[0] for line in err.getvalue().splitlines()]
    assert ("wymcp.W002" in ids) is warned
    assert "wymcp.W005" in ids  # the other warnings are still told


class Counted(Tool):
    name = "counted"
    description = "Counts how often it is made."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "go": Action(description="Go", properties={}),
    }
    made = 0

    def __init__(self) -> None:
        type(self).made += 1

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        return data


def test_a_served_engine_is_built_once(monkeypatch):
    monkeypatch.setattr(Counted, "made", 0)
    err = io.StringIO()
    engine = engine_for_command(Settings(TOOLS=(Counted,)), build_engine, err)
    assert isinstance(engine, Engine)
    assert Counted.made == 1
    run_checks(Settings(TOOLS=(Counted,)))  # `wymcp check` builds one to check
    assert Counted.made == 2


def test_a_server_that_cannot_be_built_is_told_in_one_bounded_line():
    def build(settings: Settings) -> Engine:
        raise ValueError("x" * 5000)

    err = io.StringIO()
    reported: list[CheckMessage] = []
    assert engine_for_command(Settings(), build, err, report=reported.append) is None
    (problem,) = [p for p in reported if p.is_error]
    assert problem.id == "wymcp.E006"
    assert "raised ValueError: " in problem.message
    assert len(problem.message) < 700
    assert err.getvalue() == "wymcp: fix the errors above (see `wymcp check`).\n"
