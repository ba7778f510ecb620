import pytest

from wymcp.core.schema import Tool


class Plain(Tool):
    name = "plain"
    description = "A plain tool."


def test_the_optional_hooks_default_to_nothing():
    tool = Plain()
    assert list(tool.hints("a", {})) == []
    assert tool.action_context("a", None) is None
    assert tool.title is None
    assert tool.annotations is None
    assert tool.output_schema is None
    assert tool.actions is None
    assert tool.input_schema is None


async def test_run_and_run_action_must_be_written_by_the_author():
    with pytest.raises(NotImplementedError):
        await Plain().run({}, None)
    with pytest.raises(NotImplementedError):
        await Plain().run_action("a", {}, None)
