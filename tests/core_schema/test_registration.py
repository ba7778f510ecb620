import pytest

from wymcp.core.schema import (
    Action,
    ConfigurationError,
    Tool,
    ToolSpec,
    prepare,
    prepare_all,
)


def tool_with(actions=None, **attributes):
    """A fresh multi-action tool class with the given actions."""
    namespace = {
        "name": "t",
        "description": "A tool.",
        "actions": actions if actions is not None else {},
        "run_action": lambda self, action, data, ctx: None,
        **attributes,
    }
    return type("T", (Tool,), namespace)


def problems_of(tool):
    with pytest.raises(ConfigurationError) as caught:
        prepare(tool)
    return list(caught.value.problems)


def one_action(**fields):
    fields.setdefault("description", "Do it")
    fields.setdefault("properties", {"a": {"type": "string"}, "b": {}})
    return tool_with({"do": Action(**fields)})


class Tasks(Tool):
    name = "tasks"
    description = "Track tasks."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "create": Action(
            description="Create a task",
            properties={
                "title": {"type": "string", "minLength": 1},
                "due": {"type": "string", "format": "date"},
                "priority": {"type": "integer", "minimum": 1, "maximum": 5},
            },
            required=["title"],
            defaults={"priority": 3},
        ),
    }

    async def run_action(self, action, data, ctx):
        return data


def test_a_sound_tool_is_prepared_once_and_cached():
    spec = prepare(Tasks)
    assert isinstance(spec, ToolSpec)
    assert spec.name == "tasks"
    assert isinstance(spec.tool, Tasks)
    assert prepare(Tasks) is spec
    assert prepare(spec.tool) is spec
    assert prepare(spec) is spec
    assert spec.plain is None
    assert spec.output_schema is None
    create = spec.actions["create"]
    assert create.required == ("title",)
    assert create.defaults == {"priority": 3}
    assert create.published == {
        "properties": {
            "title": {"type": "string", "minLength": 1},
            "due": {"type": "string", "format": "date"},
            "priority": {"type": "integer", "minimum": 1, "maximum": 5},
        },
        "required": ["title"],
        "defaults": {"priority": 3},
    }


def test_an_instance_is_prepared_on_its_own():
    instance = Tasks()
    spec = prepare(instance)
    assert spec.tool is instance
    assert prepare(instance) is spec


def test_required_one_of_is_published_only_when_declared():
    tool = one_action(required_one_of=[["a"], ["b"]])
    published = prepare(tool).actions["do"].published
    assert published["required_one_of"] == [["a"], ["b"]]


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"description": ""}, "description must be a non-empty string"),
        ({"description": 5}, "description must be a non-empty string"),
        (
            {"description": "two\nlines"},
            (
                "description must not contain a newline or other line break (the"
                " tools/list action enum joins action summaries with a newline)"
            ),
        ),
        (
            {"properties": ["a"]},
            "properties must be a mapping of property names to JSON Schemas",
        ),
        (
            {"properties": {"a": "string"}},
            "properties: the schema of 'a' must be a JSON object",
        ),
        (
            {"properties": {1: {}}},
            "properties: property name 1 must be a string",
        ),
        (
            {"properties": {"a": {"enum": {1, 2}}}},
            "properties['a'] holds a set, which JSON cannot carry",
        ),
        (
            {"properties": {"a": {"maximum": float("nan")}}},
            "properties['a'] holds nan, which JSON cannot carry",
        ),
        (
            {"properties": {"a": {"format": "tomorrow-ish"}}},
            (
                "properties: the schema cannot be built: Unknown format:"
                " 'tomorrow-ish'. Adjust configuration to ignore unrecognized formats"
            ),
        ),
        ({"required": "a"}, "required must be a list of property names (strings)"),
        ({"required": [1]}, "required must be a list of property names (strings)"),
        ({"required": ["a", "a"]}, "required has duplicate entries: ['a']"),
        (
            {"required": ["y"]},
            "required names properties not declared in properties: ['y']",
        ),
        (
            {"required_one_of": ["a"]},
            "required_one_of must be a list of lists of property names",
        ),
        ({"required_one_of": [[]]}, "required_one_of contains an empty group"),
        (
            {"required_one_of": [["a", "a"]]},
            "required_one_of group has duplicate entries: ['a']",
        ),
        (
            {"required_one_of": [["y"]]},
            "required_one_of group names properties not declared in properties: ['y']",
        ),
        (
            {"required_one_of": [["a", "b"], ["b", "a"]]},
            "required_one_of has duplicate groups: ['a', 'b']",
        ),
        (
            {"required_one_of": [["a"], ["a", "b"]]},
            (
                "required_one_of group ['a', 'b'] is a strict superset of ['a'] (dead:"
                " the smaller group always satisfies first)"
            ),
        ),
        ({"defaults": ["a"]}, "defaults must be a mapping of property names to values"),
        ({"defaults": {"z": 1}}, "defaults: 'z' is not declared in properties"),
        (
            {"required": ["a"], "defaults": {"a": "x"}},
            "defaults: 'a' is required, and a default never satisfies required",
        ),
        ({"defaults": {"a": 5}}, "defaults: 'a' is refused by its property schema"),
        (
            {"defaults": {"b": object()}},
            "defaults['b'] holds a object, which JSON cannot carry",
        ),
        ({"notes": 123}, "notes must be a string"),
        ({"related": "list"}, "related must be a list of strings"),
        ({"related": [1]}, "related must be a list of strings"),
        ({"examples": ["x"]}, "examples must be a list of data objects"),
    ],
)
def test_every_action_problem_is_named_with_its_action(fields, problem):
    assert problems_of(one_action(**fields)) == [f"action 'do': {problem}"]


def test_a_keyword_of_the_wrong_type_is_refused_when_the_engine_refuses_it():
    problems = problems_of(one_action(properties={"a": {"type": 5}}))
    assert len(problems) == 1
    assert problems[0].startswith(
        "action 'do': properties: the schema cannot be built:"
    )


def test_a_default_its_nested_schema_refuses_is_named():
    tool = one_action(
        properties={"p": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        defaults={"p": {"n": 1, "extra": True}},
    )
    assert problems_of(tool) == [
        "action 'do': defaults: 'p' is refused by its property schema"
    ]


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        (
            "a\nb",
            (
                "an action name must not contain a newline or other line break (the"
                " tools/list action enum joins action summaries with a newline)"
            ),
        ),
    ],
)
def test_a_bad_action_name_is_named(name, problem):
    tool = tool_with({name: Action(description="d", properties={})})
    assert problems_of(tool) == [f"action {name!r}: {problem}"]


def test_an_empty_or_non_string_action_name_is_refused():
    tool = tool_with({"": Action(description="d", properties={})})
    assert problems_of(tool) == ["action '': an action name must be a non-empty string"]
    tool = tool_with({1: Action(description="d", properties={})})
    assert problems_of(tool) == ["action 1: an action name must be a non-empty string"]


def test_an_action_that_is_not_an_action_is_refused():
    problems = problems_of(tool_with({"do": {"description": "d"}}))
    assert len(problems) == 1
    assert problems[0].startswith(
        "action 'do': must be an Action (fields: description,"
    )


def test_every_problem_of_a_tool_comes_in_one_error():
    tool = tool_with(
        {
            "one": Action(description="", properties={}),
            "two": Action(description="d", properties={}, required=["x"]),
        }
    )
    assert problems_of(tool) == [
        "action 'one': description must be a non-empty string",
        "action 'two': required names properties not declared in properties: ['x']",
    ]


@pytest.mark.parametrize(
    ("attributes", "problem"),
    [
        (
            {"name": ""},
            "name must be 1 to 128 characters of letters, digits, '_', '-' or '.'",
        ),
        (
            {"name": "a b"},
            "name must be 1 to 128 characters of letters, digits, '_', '-' or '.'",
        ),
        (
            {"name": "x" * 129},
            "name must be 1 to 128 characters of letters, digits, '_', '-' or '.'",
        ),
        ({"description": ""}, "description must be a non-empty string"),
        ({"title": 5}, "title must be a string or None"),
        ({"annotations": ["readOnlyHint"]}, "annotations must be a mapping or None"),
        ({"actions": ["do"]}, "actions must be a mapping of action names to Action"),
        (
            {"output_schema": "object"},
            "output_schema must be a JSON Schema object or None",
        ),
        ({"input_schema": "object"}, "input_schema must be a JSON Schema object"),
        (
            {"input_schema": {"type": "array"}},
            'input_schema must have "type": "object" at its root',
        ),
    ],
)
def test_every_tool_level_problem_is_named(attributes, problem):
    assert problems_of(tool_with(**attributes)) == [problem]


def test_a_tool_without_a_name_is_labelled_by_its_class():
    class Nameless(Tool):
        description = "d"
        actions = {}  # noqa: RUF012 - the pinned declaration style

        async def run_action(self, action, data, ctx):
            return None

    with pytest.raises(ConfigurationError) as caught:
        prepare(Nameless)
    assert caught.value.tool == "Nameless"


def test_an_output_schema_the_engine_cannot_build_is_refused():
    problems = problems_of(tool_with(output_schema={"type": "object", "minItems": "x"}))
    assert len(problems) == 1
    assert problems[0].startswith("output_schema cannot be built:")


def test_an_output_schema_leaves_format_an_annotation():
    tool = tool_with(
        output_schema={
            "type": "object",
            "properties": {"when": {"type": "string", "format": "date"}},
            "required": ["when"],
        }
    )
    spec = prepare(tool)
    assert spec.validate_output({"when": "tomorrow"}) == []
    problems = spec.validate_output({"when": 5})
    assert len(problems) == 1
    assert problems[0].startswith("/when: type")
    assert spec.validate_output({}) != []


def test_output_problems_are_bounded():
    tool = tool_with(output_schema={"type": "array", "items": {"type": "string"}})
    assert len(prepare(tool).validate_output(list(range(100)))) == 10


def test_a_tool_without_run_action_is_refused():
    tool = type("T", (Tool,), {"name": "t", "description": "d", "actions": {}})
    assert problems_of(tool) == ["a tool with actions must define run_action"]


def test_a_plain_tool_without_run_is_refused():
    tool = type("T", (Tool,), {"name": "t", "description": "d"})
    assert problems_of(tool) == ["a tool without actions must define run"]


def test_a_hand_written_schema_with_bad_header_annotations_is_refused():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "number", "x-mcp-header": "A"},
            "b": {"type": "string", "x-mcp-header": "a"},
        },
    }
    problems = problems_of(tool_with(input_schema=schema))
    assert problems == [
        (
            "input_schema: property 'a': x-mcp-header needs a single 'type' of string,"
            " integer or boolean"
        ),
        (
            "input_schema: property 'b': x-mcp-header 'a' repeats the header of"
            " property 'a' (headers compare case-insensitively)"
        ),
    ]


def test_a_hand_written_schema_the_engine_cannot_build_is_refused():
    problems = problems_of(
        tool_with(
            input_schema={"type": "object", "properties": {"a": {"format": "nope"}}}
        )
    )
    assert len(problems) == 1
    assert problems[0].startswith("input_schema cannot be built: Unknown format")


def test_a_multi_action_tool_may_publish_a_hand_written_schema_with_headers():
    schema = {
        "type": "object",
        "properties": {
            "action": {"type": "string"},
            "data": {
                "type": "object",
                "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            },
        },
    }
    spec = prepare(
        tool_with({"do": Action(description="d", properties={})}, input_schema=schema)
    )
    assert spec.input_schema == schema
    assert [a.path for a in spec.header_annotations] == [("data", "region")]
    assert list(spec.actions) == ["do"]


class Ping(Tool):
    name = "ping"
    description = "Answer pong."

    async def run(self, arguments, ctx):
        return "pong"


class Lookup(Tool):
    name = "lookup"
    description = "Look something up."
    input_schema = {  # noqa: RUF012 - the pinned declaration style
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "region": {"type": "string", "x-mcp-header": "Region"},
            "filter": {"type": "object", "properties": {"tag": {"type": "string"}}},
        },
        "required": ["query"],
    }

    async def run(self, arguments, ctx):
        return arguments


def test_a_plain_tool_without_a_schema_takes_no_arguments():
    spec = prepare(Ping)
    assert spec.actions == {}
    assert spec.input_schema == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert spec.plain is not None
    assert spec.plain.action is None


def test_a_plain_tool_publishes_its_schema_as_written_and_gates_the_closed_form():
    spec = prepare(Lookup)
    assert spec.input_schema == Lookup.input_schema
    assert spec.plain is not None
    assert spec.plain.required == ("query",)
    assert spec.plain.published["additionalProperties"] is False
    assert spec.plain.published["properties"]["filter"]["additionalProperties"] is False
    assert [(a.header, a.path, a.type) for a in spec.header_annotations] == [
        ("Region", ("region",), "string")
    ]


def test_prepare_all_refuses_the_reserved_name_and_duplicates():
    class Help(Ping):
        name = "help"

    class Again(Ping):
        pass

    with pytest.raises(ConfigurationError) as caught:
        prepare_all([Ping, Help, Again])
    assert caught.value.problems == (
        (
            "tool 'help': uses the reserved name 'help'; the help tool is provided by"
            " wymcp and added to every server"
        ),
        "tool 'ping': duplicate tool name; each tool needs its own",
    )


def test_prepare_all_gathers_the_problems_of_every_tool():
    bad = tool_with({"do": Action(description="", properties={})})
    with pytest.raises(ConfigurationError) as caught:
        prepare_all([bad, Ping, tool_with(name="u", description="")])
    assert caught.value.problems == (
        "tool 't': action 'do': description must be a non-empty string",
        "tool 'u': description must be a non-empty string",
    )


def test_prepare_all_returns_the_specs_in_order():
    specs = prepare_all([Ping, Lookup, Tasks()])
    assert [spec.name for spec in specs] == ["ping", "lookup", "tasks"]


def test_something_that_is_not_a_tool_is_refused():
    with pytest.raises(ConfigurationError, match="not a subclass of wymcp Tool"):
        prepare(dict)
    with pytest.raises(ConfigurationError, match="not a wymcp Tool class or instance"):
        prepare(42)


def test_a_tool_that_needs_arguments_to_start_is_refused():
    class Needy(Ping):
        def __init__(self, db):
            self.db = db

    with pytest.raises(ConfigurationError, match="cannot be instantiated"):
        prepare(Needy)


def test_tuples_are_arrays_to_json():
    tool = one_action(properties={"a": {"enum": ("x", "y")}}, defaults={"a": "x"})
    assert prepare(tool).actions["do"].defaults == {"a": "x"}


def test_a_default_nested_too_deeply_is_refused():
    deep: list = []
    node = deep
    for _ in range(300):
        node.append([])
        node = node[0]
    problems = problems_of(one_action(properties={"b": {}}, defaults={"b": deep}))
    assert problems == ["action 'do': defaults['b'] is nested too deeply"]


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        (
            {"required": ["a"], "examples": [{"b": 1}]},
            "examples[0] lacks required ['a']",
        ),
        (
            {"required_one_of": [["a"], ["b"]], "examples": [{}]},
            "examples[0] completes no required_one_of group",
        ),
        (
            {"examples": [{"a": "x"}, {"a": 5}]},
            "examples[1] is refused by the action's schema",
        ),
        ({"examples": [{"zz": 1}]}, "examples[0] is refused by the action's schema"),
    ],
)
def test_every_example_must_pass_the_actions_gates(fields, problem):
    assert problems_of(one_action(**fields)) == [f"action 'do': {problem}"]


@pytest.mark.parametrize(
    "brk", ["\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x85", "\r\n", "\r"]
)
def test_any_line_break_in_a_description_or_name_is_refused_like_a_newline(brk):
    tool = tool_with({f"a{brk}b": Action(description=f"one{brk}two", properties={})})
    name = f"a{brk}b"
    assert problems_of(tool) == [
        (
            f"action {name!r}: an action name must not contain a newline or other"
            " line break (the tools/list action enum joins action summaries with a"
            " newline)"
        ),
        (
            f"action {name!r}: description must not contain a newline or other line"
            " break (the tools/list action enum joins action summaries with a newline)"
        ),
    ]


def test_a_trailing_line_break_in_a_description_is_refused():
    tool = one_action(description="Do it\u2028")
    assert len(problems_of(tool)) == 1
