import json

from wymcp.core.gates import check, help_pointer
from wymcp.core.schema import Action, Tool


class Widgets(Tool):
    name = "widgets"
    description = "Manage widgets"
    actions = {  # noqa: RUF012
        "locate": Action(
            description="Locate a widget",
            properties={"path": {"type": "string"}, "depth": {"type": "integer"}},
            required=["path"],
            defaults={"depth": 1},
        ),
        "identify": Action(
            description="Identify a widget",
            properties={
                "id": {"type": "string"},
                "name": {"type": "string"},
                "color": {"type": "string"},
            },
            required_one_of=[["id"], ["name", "color"]],
        ),
        "bare": Action(description="Nothing", properties={}),
        "count": Action(
            description="Count",
            properties={"n": {"type": "integer", "maximum": 100}},
        ),
    }

    async def run_action(self, action, data, ctx):
        return data


LOCATE_SCHEMA = {
    "properties": {"path": {"type": "string"}, "depth": {"type": "integer"}},
    "required": ["path"],
    "defaults": {"depth": 1},
}


def test_help_pointers_are_copyable_calls():
    assert help_pointer("widgets") == 'help {tool: "widgets"}'
    assert (
        help_pointer("widgets", "create") == 'help {tool: "widgets", action: "create"}'
    )


def test_unknown_action():
    assert check(Widgets, "nope", {}).refusal == {
        "error": "unknown_action",
        "message": (
            "Unknown action 'nope' for tool 'widgets'. Valid actions: bare, count,"
            " identify, locate."
        ),
        "tool": "widgets",
        "action": "nope",
        "valid_actions": ["bare", "count", "identify", "locate"],
        "help": 'help {tool: "widgets"}',
    }


def test_missing_required_fields():
    assert check(Widgets, "locate", {}).refusal == {
        "error": "missing_required_fields",
        "message": "Required fields missing: path.",
        "tool": "widgets",
        "action": "locate",
        "missing": ["path"],
        "input_schema": LOCATE_SCHEMA,
        "help": 'help {tool: "widgets", action: "locate"}',
    }


def test_missing_required_group():
    assert check(Widgets, "identify", {"name": "n"}).refusal == {
        "error": "missing_required_group",
        "message": (
            "At least one of these field groups must be fully present:"
            " (id) OR (name + color)."
        ),
        "tool": "widgets",
        "action": "identify",
        "required_one_of": [["id"], ["name", "color"]],
        "input_schema": {
            "properties": {
                "id": {"type": "string"},
                "name": {"type": "string"},
                "color": {"type": "string"},
            },
            "required": [],
            "defaults": {},
            "required_one_of": [["id"], ["name", "color"]],
        },
        "help": 'help {tool: "widgets", action: "identify"}',
    }


def test_unknown_params():
    assert check(Widgets, "bare", {"bogus": 1}).refusal == {
        "error": "unknown_params",
        "message": (
            "Unknown parameter(s) for action 'bare': data.bogus. These are rejected"
            " rather than silently ignored."
        ),
        "tool": "widgets",
        "action": "bare",
        "unknown": ["data.bogus"],
        "unknown_count": 1,
        "input_schema": {"properties": {}, "required": [], "defaults": {}},
        "help": 'help {tool: "widgets", action: "bare"}',
    }


def test_unknown_params_are_bounded_to_ten_in_path_order_with_a_count():
    sent = {f"k{i}": i for i in range(25)}
    refusal = check(Widgets, "bare", sent).refusal
    assert refusal["unknown"] == [
        "data.k0",
        "data.k1",
        "data.k10",
        "data.k11",
        "data.k12",
        "data.k13",
        "data.k14",
        "data.k15",
        "data.k16",
        "data.k17",
    ]
    assert refusal["unknown_count"] == 25
    assert refusal["message"].startswith(
        "Unknown parameter(s) for action 'bare': data.k0, data.k1, data.k10 and 22"
        " more."
    )


def test_invalid_values():
    assert check(Widgets, "count", {"n": 101}).refusal == {
        "error": "invalid_values",
        "message": "Invalid value(s) for action 'count' at data.n; see errors.",
        "tool": "widgets",
        "action": "count",
        "errors": [
            {"path": "data.n", "problems": ["value is higher than maximum 100"]}
        ],
        "error_count": 1,
        "input_schema": {
            "properties": {"n": {"type": "integer", "maximum": 100}},
            "required": [],
            "defaults": {},
        },
        "help": 'help {tool: "widgets", action: "count"}',
    }


def test_every_refusal_is_json():
    for action, data in [
        ("nope", {}),
        ("locate", {}),
        ("identify", {}),
        ("bare", {"x": 1}),
        ("count", {"n": "x"}),
    ]:
        refusal = check(Widgets, action, data).refusal
        assert json.loads(json.dumps(refusal)) == refusal


def test_an_echoed_action_name_is_cut():
    refusal = check(Widgets, "x" * 10_000, {}).refusal
    assert len(refusal["action"]) == 120
    assert refusal["action"].endswith("…")
    assert len(refusal["message"]) < 300


def test_a_non_string_action_is_an_unknown_action():
    refusal = check(Widgets, 5, {}).refusal  # type: ignore[arg-type]
    assert refusal["action"] == "<int>"
    refusal = check(Widgets, object(), {}).refusal  # type: ignore[arg-type]
    assert refusal["action"] == "<object>"


def test_a_partial_count_is_said_in_the_message():
    class Combined(Tool):
        name = "combined"
        description = "d"
        actions = {  # noqa: RUF012
            "a": Action(
                description="d",
                properties={
                    "v": {"items": {"type": "number"}, "unevaluatedItems": False}
                },
            )
        }

        async def run_action(self, action, data, ctx):
            return data

    refusal = check(Combined, "a", {"v": ["x"] * 2000}).refusal
    assert refusal["error_count"] == 1000
    assert refusal["message"] == (
        "Invalid value(s) for action 'a' at data.v[0], data.v[1], data.v[2] and 997"
        " more (counting stopped early); see errors."
    )
