"""Tool.scopes: the declaration registration checks, and the scopes a call needs."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from wymcp.core.schema import Action, ConfigurationError, Tool, prepare, required_scopes


class Notes(Tool):
    name = "notes"
    description = "Keep notes."
    actions: ClassVar[dict[str, Action]] = {
        "read": Action(description="Read notes", properties={}),
        "erase": Action(description="Erase notes", properties={}),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        return None


def declared(scopes: object) -> Any:
    tool = type("Scoped", (Notes,), {"scopes": scopes, "name": "scoped"})
    return prepare(tool).scopes


def test_no_declaration_means_no_scopes():
    assert dict(prepare(Notes).scopes) == {}


def test_scopes_for_every_action_and_for_one():
    table = declared({"*": ["notes:read"], "erase": ["notes:admin"]})
    assert required_scopes(table, "read") == {"notes:read"}
    assert required_scopes(table, "erase") == {"notes:read", "notes:admin"}
    assert required_scopes(table, None) == {"notes:read"}
    assert required_scopes(declared(["x"]), "erase") == {"x"}
    assert required_scopes(declared(None), "erase") == frozenset()
    assert required_scopes(declared({"erase": []}), "erase") == frozenset()


@pytest.mark.parametrize(
    ("scopes", "problem"),
    [
        ("notes:read", "scopes must be a list of strings, not str"),
        ({"write": ["x"]}, "'write' is neither '*' nor an action of the tool"),
        ({"*": ["two words"]}, "'two words' is not a scope"),
        ({"*": ['q"uote']}, "is not a scope"),
        ({"*": [3]}, "int is not a scope"),
        ({3: ["x"]}, "int is neither '*' nor an action"),
        (5, "scopes must be a list of strings, not int"),
    ],
)
def test_a_wrong_declaration_names_the_tool_and_the_problem(scopes, problem):
    with pytest.raises(ConfigurationError) as exc:
        declared(scopes)
    assert exc.value.tool == "scoped"
    assert any(problem in text for text in exc.value.problems), exc.value.problems


def test_every_problem_is_named_at_once():
    with pytest.raises(ConfigurationError) as exc:
        declared({"*": ["a b"], "nope": ["x"], "erase": "y"})
    assert len(exc.value.problems) == 3


def test_a_plain_tool_may_only_use_the_wildcard():
    class Plain(Tool):
        name = "plain"
        description = "A plain tool."
        input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
        scopes: ClassVar[dict[str, list[str]]] = {"run": ["x"]}

        async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
            return None

    with pytest.raises(ConfigurationError, match="none, a plain tool"):
        prepare(Plain)
