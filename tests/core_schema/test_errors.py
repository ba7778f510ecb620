from wymcp.core.schema import ConfigurationError, ToolError


def test_a_configuration_error_names_the_tool_and_lists_every_problem():
    error = ConfigurationError("tasks", ["action 'a': one", "action 'b': two"])
    assert error.tool == "tasks"
    assert error.problems == ("action 'a': one", "action 'b': two")
    text = str(error)
    assert text.startswith("Tool 'tasks' has 2 configuration problems:")
    assert "  - action 'a': one" in text
    assert "  - action 'b': two" in text


def test_one_problem_reads_in_the_singular():
    assert str(ConfigurationError("t", ["x"])).startswith(
        "Tool 't' has 1 configuration problem:"
    )


def test_a_tool_error_carries_its_message():
    assert str(ToolError("no such task")) == "no such task"


def test_problems_across_tools_are_introduced_without_a_tool():
    error = ConfigurationError(None, ["tool 'a': x", "tool 'b': y"])
    assert error.tool is None
    assert str(error).startswith("The tools have 2 configuration problems:")
