from wymcp.core.schema import (
    Action,
    Tool,
    action_summaries,
    build_input_schema,
    prepare,
)


class Widgets(Tool):
    name = "widgets"
    description = "Manage widgets"
    actions = {  # noqa: RUF012 - the pinned declaration style
        "list": Action(description="List widgets", properties={}),
        "create": Action(
            description="Create a widget",
            properties={"name": {"type": "string", "x-mcp-header": "Name"}},
            required=["name"],
        ),
        "bare": Action(description="Do nothing", properties={}),
    }

    async def run_action(self, action, data, ctx):
        return {}


def test_the_published_schema_is_the_compact_shape():
    assert prepare(Widgets).input_schema == {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["bare", "create", "list"],
                "description": (
                    "bare: Do nothing\ncreate: Create a widget\nlist: List widgets"
                ),
            },
            "data": {
                "type": "object",
                "description": (
                    "The action's fields. Required, by action: bare: none;"
                    " create: name; list: none."
                ),
            },
        },
        "required": ["action"],
        "additionalProperties": False,
    }


def test_the_published_schema_carries_no_header_annotation_and_no_combinator():
    spec = prepare(Widgets)
    text = repr(spec.input_schema)
    assert "x-mcp-header" not in text
    assert "oneOf" not in text
    assert "anyOf" not in text
    assert spec.header_annotations == ()


def test_summaries_are_sorted_and_shared_by_spec_class_and_instance():
    expected = ["bare: Do nothing", "create: Create a widget", "list: List widgets"]
    spec = prepare(Widgets)
    assert action_summaries(spec) == expected
    assert action_summaries(Widgets) == expected
    assert action_summaries(spec.tool) == expected
    enum = spec.input_schema["properties"]["action"]
    assert enum["description"] == "\n".join(expected)


def test_no_actions_give_an_empty_enum_and_description():
    schema = build_input_schema({})
    assert schema["properties"]["action"]["enum"] == []
    assert schema["properties"]["action"]["description"] == ""
    assert action_summaries(object()) == []


def test_the_public_readers_refuse_a_map_registration_would_refuse():
    import pytest

    from wymcp.core.schema import ConfigurationError

    split = {"go": Action(description="one\u2028two", properties={})}
    with pytest.raises(ConfigurationError, match="line break"):
        build_input_schema(split)

    class Holder:
        actions = split

    with pytest.raises(ConfigurationError, match="line break"):
        action_summaries(Holder())
    with pytest.raises(ConfigurationError, match="cannot be built"):
        build_input_schema(
            {"go": Action(description="d", properties={"d": {"format": "nope"}})}
        )
    with pytest.raises(ConfigurationError, match="must be an Action"):
        build_input_schema({"go": "not an action"})


def test_every_summary_is_one_line_of_the_enum_description():
    spec = prepare(Widgets)
    summaries = action_summaries(spec)
    description = spec.input_schema["properties"]["action"]["description"]
    assert description.splitlines() == summaries
    assert build_input_schema(spec.actions) == spec.input_schema
