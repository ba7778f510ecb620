"""Task support (SEP-2663) declared on a tool, an Action or @action: checked at
registration, resolved per action, summed up for tools/list.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from wymcp.core.schema import (
    Action,
    ConfigurationError,
    Tool,
    action,
    prepare,
    published_task_support,
)


def _multi(tool_support: Any, export: Any, peek: Any = None) -> type[Tool]:
    class Multi(Tool):
        name = "multi"
        description = "Two actions."
        task_support = tool_support
        actions: ClassVar[dict[str, Action]] = {
            "export": Action(description="Export", properties={}, task_support=export),
            "peek": Action(description="Peek", properties={}, task_support=peek),
        }

        async def run_action(self, action: str, data: Any, ctx: Any) -> object:
            return action

    return Multi


def test_nothing_declared_is_forbidden():
    spec = prepare(_multi(None, None))
    assert spec.task_support == {"export": "forbidden", "peek": "forbidden"}
    assert published_task_support(spec.task_support) == "forbidden"


def test_an_action_overrides_the_tool():
    spec = prepare(_multi("optional", "required"))
    assert spec.task_support_for("export") == "required"
    assert spec.task_support_for("peek") == "optional"
    assert spec.task_support_for("nope") == "forbidden"
    assert published_task_support(spec.task_support) == "optional"


def test_every_action_required_publishes_required():
    spec = prepare(_multi("required", None))
    assert published_task_support(spec.task_support) == "required"


@pytest.mark.parametrize("bad", ["sometimes", 3, "x" * 500])
def test_a_bad_value_is_a_configuration_error_naming_the_place(bad):
    with pytest.raises(ConfigurationError) as raised:
        prepare(_multi(None, bad))
    text = str(raised.value)
    assert "action 'export': task_support must be one of forbidden, optional," in text
    assert "x" * 100 not in text
    with pytest.raises(ConfigurationError, match="task_support must be one of"):
        prepare(_multi(bad, None))


def test_a_plain_tool_declares_it_on_the_class():
    class Plain(Tool):
        name = "plain"
        description = "Plain."
        task_support = "optional"

        async def run(self, arguments: Any, ctx: Any) -> object:
            return None

    assert prepare(Plain).task_support_for(None) == "optional"


def test_the_decorator_declares_it():
    class Decorated(Tool):
        name = "decorated"
        description = "Decorated."

        @action(description="Export", properties={}, task_support="required")
        async def export(self, data: dict[str, Any], ctx: Any) -> object:
            return "ok"

        @action(description="Peek", properties={})
        async def peek(self, data: dict[str, Any], ctx: Any) -> object:
            return "ok"

    spec = prepare(Decorated)
    assert spec.task_support == {"export": "required", "peek": "forbidden"}


def test_a_bare_decorator_cannot_declare_it():
    class Bare(Tool):
        name = "bare"
        description = "Bare."
        actions: ClassVar[dict[str, Action]] = {
            "export": Action(description="Export", properties={}),
        }

        @action(task_support="required")
        async def export(self, data: dict[str, Any], ctx: Any) -> object:
            return "ok"

    with pytest.raises(ConfigurationError, match="task_support belongs to the decl"):
        prepare(Bare)
