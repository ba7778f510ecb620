"""run_checks: warnings and errors with stable ids."""

from __future__ import annotations

from ops_tools import Jobs
from wymcp.conf import Settings, load_settings, run_checks


def ids(settings: Settings) -> list[str]:
    return [problem.id for problem in run_checks(settings)]


def test_the_default_settings_warn_about_the_secret_and_the_empty_tool_list():
    assert ids(Settings()) == ["wymcp.W002", "wymcp.W005"]


def test_unknown_names_are_warnings(settings_module):
    settings = load_settings(
        settings_module("MY_OWN_THING = 1\n"), STATE_SECRET="k" * 32
    )
    (w001,) = [p for p in run_checks(settings) if p.id == "wymcp.W001"]
    assert not w001.is_error
    assert "MY_OWN_THING" in w001.message


def test_a_message_reads_with_its_id_and_hint():
    (problem,) = [p for p in run_checks(Settings()) if p.id == "wymcp.W002"]
    assert str(problem).startswith("wymcp.W002 (warning): STATE_SECRET is not set")
    assert "HINT: Set STATE_SECRET" in str(problem)


def test_a_tool_that_cannot_be_served_is_an_error():
    from wymcp.core.schema import Tool

    class Broken(Tool):
        name = "broken"
        description = "Declares no actions and no schema."

    (problem,) = [p for p in run_checks(Settings(TOOLS=(Broken,))) if p.is_error]
    assert problem.id == "wymcp.E006"
    assert "broken" in problem.message


def test_something_that_is_no_tool_is_an_error():
    problems = run_checks(Settings(TOOLS=(42,)))
    assert [p.id for p in problems if p.is_error] == ["wymcp.E006"]


def test_a_resource_that_cannot_be_served_is_an_error():
    problems = run_checks(Settings(RESOURCES=("not a resource",)))
    assert [p.id for p in problems if p.is_error] == ["wymcp.E006"]


def test_a_task_budget_that_cannot_keep_one_result_warns() -> None:
    assert "wymcp.W016" not in ids(Settings())  # 16 MiB results, 32 MiB budget
    low = Settings().evolve(TASK_MEMORY_BUDGET_PER_PRINCIPAL=8 * 1024 * 1024)
    (problem,) = [p for p in run_checks(low) if p.id == "wymcp.W016"]
    assert "TASK_MEMORY_BUDGET_PER_PRINCIPAL (8388608)" in str(problem)
    assert "ends failed" in str(problem)
    total = Settings().evolve(TASK_MEMORY_BUDGET=4 * 1024 * 1024)
    (problem,) = [p for p in run_checks(total) if p.id == "wymcp.W016"]
    assert "TASK_MEMORY_BUDGET (4194304)" in str(problem)
    roomy = Settings().evolve(RESULT_LIMIT=1024 * 1024, TASK_MEMORY_BUDGET=4 << 20)
    assert "wymcp.W016" not in ids(roomy)


def test_a_metrics_path_the_server_already_routes_is_an_error():
    for path in ("/mcp", "/healthz", "/readyz"):
        problems = run_checks(Settings().evolve(METRICS=True, METRICS_PATH=path))
        (e018,) = [p for p in problems if p.id == "wymcp.E018"]
        assert e018.is_error
        assert repr(path) in e018.message
    assert "wymcp.E018" not in ids(Settings().evolve(METRICS=True))
    assert "wymcp.E018" not in ids(
        Settings().evolve(METRICS=True, PATH="/api", METRICS_PATH="/mcp")
    )
    assert "wymcp.E018" not in ids(Settings().evolve(METRICS_PATH="/healthz"))


def test_a_rate_rule_naming_an_unknown_tool_or_action_warns():

    settings = Settings().evolve(
        TOOLS=[Jobs],
        RATE_LIMITS=[
            {"tool": "job", "rate": "1/h"},
            {"tool": "jobs", "action": "runn", "rate": "1/h"},
            {"tool": "help", "rate": "1/h"},
            {"tool": "jobs", "action": "run", "rate": "1/h"},
            {"rate": "1/h"},
        ],
    )
    warned = [p.message for p in run_checks(settings) if p.id == "wymcp.W018"]
    assert len(warned) == 3
    assert "tool 'job'" in warned[0]
    assert "action 'runn' of tool 'jobs'" in warned[1]
    assert "tool 'help'" in warned[2]
