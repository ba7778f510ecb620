"""The seed's rules at every depth: defaults, paths, multipleOf, casts, combinators."""

import json
import time

import pytest

from wymcp.core.gates import _value_gate, check
from wymcp.core.schema import Action, Tool, prepare


def tool_of(properties, *, defaults=None, required=()):
    class Edge(Tool):
        name = "edge"
        description = "Edge cases."
        actions = {  # noqa: RUF012 - the pinned declaration style
            "go": Action(
                description="Go",
                properties=properties,
                required=list(required),
                defaults=defaults or {},
            )
        }

        async def run_action(self, action, data, ctx):
            return data

    return prepare(Edge)


UNNAMED = _value_gate.UNNAMED


def paths(refusal):
    return [entry["path"] for entry in refusal["errors"]]


# Defaults are the caller's own, never the spec's.


def test_a_defaulted_list_changed_by_a_tool_does_not_change_the_next_call():
    spec = tool_of(
        {"tags": {"type": "array", "items": {"type": "string"}}, "n": {}},
        defaults={"tags": ["a"]},
    )
    first = check(spec, "go", {}).data
    first["tags"].append(5)
    second = check(spec, "go", {})
    assert second.data == {"tags": ["a"]}
    assert spec.actions["go"].published["defaults"] == {"tags": ["a"]}


def test_a_defaulted_object_is_copied_at_every_depth():
    spec = tool_of(
        {"opts": {"type": "object", "properties": {"xs": {"type": "array"}}}},
        defaults={"opts": {"xs": [1]}},
    )
    check(spec, "go", {}).data["opts"]["xs"].append(2)
    assert check(spec, "go", {}).data == {"opts": {"xs": [1]}}


def test_a_sent_value_is_never_replaced_by_a_copy_of_its_default():
    spec = tool_of({"tags": {"type": "array"}}, defaults={"tags": []})
    sent = ["x"]
    assert check(spec, "go", {"tags": sent}).data["tags"] is sent


# What a refusal or help hands out cannot change the spec.


def test_changing_a_refusal_leaves_the_spec_and_the_next_refusal_alone():
    spec = tool_of({"n": {"type": "integer"}}, defaults={"n": 1})
    refusal = check(spec, "go", {"n": "x"}).refusal
    refusal["input_schema"]["properties"]["n"]["type"] = "string"
    refusal["input_schema"]["defaults"]["n"] = "x"
    refusal["input_schema"]["required"].append("n")
    again = check(spec, "go", {"n": "x"}).refusal
    assert again["input_schema"]["properties"]["n"] == {"type": "integer"}
    assert spec.actions["go"].published["defaults"] == {"n": 1}
    assert spec.actions["go"].published["required"] == []


# Paths come from the instance: an object key is a key, an array index an index.


@pytest.mark.parametrize(
    "schema",
    [
        {
            "anyOf": [
                {
                    "type": "object",
                    "additionalProperties": {
                        "type": "array",
                        "items": {"type": "integer"},
                    },
                }
            ]
        },
        {"allOf": [{"additionalProperties": {"items": {"type": "integer"}}}]},
        {
            "$ref": "#/properties/w/$defs/map",
            "$defs": {"map": {"additionalProperties": {"items": {"type": "integer"}}}},
        },
    ],
)
def test_an_all_digit_object_key_is_spelled_as_a_key(schema):
    spec = tool_of({"w": schema})
    refusal = check(spec, "go", {"w": {"1": ["x"]}}).refusal
    assert 'data.w["1"][0]' in paths(refusal), paths(refusal)
    assert "data.w[1][0]" not in paths(refusal)


def test_an_array_index_stays_an_index_under_a_combinator():
    spec = tool_of({"w": {"allOf": [{"items": {"type": "integer"}}]}})
    assert paths(check(spec, "go", {"w": [1, "x"]}).refusal) == ["data.w[1]"]


# multipleOf is decided exactly.


def test_multiple_of_above_2_53_is_decided_exactly():
    spec = tool_of({"n": {"type": "integer", "multipleOf": 3}})
    # A float means the decimal its repr spells: 1.1060260653197888e18 is
    # 1106026065319788800 (digit sum 71), whatever its binary value divides.
    big = 1.1060260653197888e18
    verdict = check(spec, "go", {"n": big})
    assert not verdict.accepted
    assert verdict.refusal["errors"][0]["problems"] == ["value is not a multiple of 3"]
    assert not check(spec, "go", {"n": 2**70 + 1}).accepted
    assert check(spec, "go", {"n": 3 * 2**70}).data == {"n": 3 * 2**70}
    # float(3 * 2**60) spells 3.458764513820541e18: the tool receives that decimal.
    assert check(spec, "go", {"n": float(3 * 2**60)}).data == {"n": 3458764513820541000}


def test_a_whole_float_above_2_53_is_cast_to_the_decimal_it_spells():
    # 1.1060260653197889e18 spells 1106026065319788900, a multiple of 3; its binary
    # value (...928) is not, and the tool must receive what the gate decided on.
    spec = tool_of({"n": {"type": "integer", "multipleOf": 3}})
    verdict = check(spec, "go", {"n": 1.1060260653197889e18})
    assert verdict.data == {"n": 1106026065319788900}
    assert verdict.data["n"] % 3 == 0


def test_multiple_of_is_exact_for_fractions_and_inside_combinators():
    spec = tool_of(
        {
            "p": {"multipleOf": 0.5},
            "q": {"anyOf": [{"type": "integer", "multipleOf": 3}, {"type": "null"}]},
            "r": {"not": {"multipleOf": 2}},
        }
    )
    assert check(spec, "go", {"p": 2.5, "q": 9, "r": 3}).accepted
    assert not check(spec, "go", {"p": 2.25}).accepted
    assert not check(spec, "go", {"q": 1.1060260653197888e18}).accepted
    assert check(spec, "go", {"p": 0.5, "q": 1.1060260653197889e18}).accepted
    assert not check(spec, "go", {"r": 2**80}).accepted


def test_a_value_multiple_of_cannot_decide_gets_the_seed_text():
    spec = tool_of({"n": {"multipleOf": 3}})
    refusal = check(spec, "go", {"n": float("inf")}).refusal
    assert refusal["errors"][0]["problems"] == [
        "value could not be checked against multipleOf"
    ]


# The integer cast follows the schema that accepted the value, at any depth.


@pytest.mark.parametrize(
    ("schema", "sent", "read"),
    [
        ({"additionalProperties": {"type": "integer"}}, {"a": 2.0}, {"a": 2}),
        ({"patternProperties": {"^n": {"type": "integer"}}}, {"n1": 2.0}, {"n1": 2}),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, 2.0, 2),
        ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, 2.0, 2),
        ({"allOf": [{"type": "integer"}, {"minimum": 0}]}, 2.0, 2),
        ({"anyOf": [{"type": "number"}, {"type": "integer"}]}, 2.0, 2.0),
        (
            {"anyOf": [{"type": "array", "items": {"type": "integer"}}]},
            [1.0, 2.0],
            [1, 2],
        ),
        (
            {
                "type": "object",
                "additionalProperties": {
                    "type": "array",
                    "items": {"allOf": [{"type": "integer"}]},
                },
            },
            {"k": [3.0]},
            {"k": [3]},
        ),
        (
            {
                "$ref": "#/properties/w/$defs/t",
                "$defs": {
                    "t": {
                        "type": "object",
                        "properties": {
                            "n": {"type": "integer"},
                            "kids": {
                                "type": "array",
                                "items": {"$ref": "#/properties/w/$defs/t"},
                            },
                        },
                    }
                },
            },
            {"n": 1.0, "kids": [{"n": 2.0, "kids": [{"n": 3.0}]}]},
            {"n": 1, "kids": [{"n": 2, "kids": [{"n": 3}]}]},
        ),
    ],
)
def test_whole_floats_are_cast_wherever_the_accepting_schema_says_integer(
    schema, sent, read
):
    data = check(tool_of({"w": schema}), "go", {"w": sent}).data
    assert data == {"w": read}
    assert type(data["w"]) is type(read)
    assert json.dumps(data) == json.dumps({"w": read})


# anyOf/oneOf name each branch's causes, bounded.


def test_any_of_names_what_each_branch_needs():
    spec = tool_of({"w": {"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}})
    problems = check(spec, "go", {"w": {}}).refusal["errors"][0]["problems"]
    assert problems == [
        "property 'a' is required",
        "property 'b' is required",
        "value matches no schema of anyOf",
    ]


def test_one_of_names_causes_at_their_own_paths():
    spec = tool_of(
        {
            "w": {
                "oneOf": [
                    {"type": "array", "items": {"type": "integer"}},
                    {"type": "null"},
                ]
            }
        }
    )
    errors = check(spec, "go", {"w": [1, "x"]}).refusal["errors"]
    assert errors == [
        {
            "path": "data.w",
            "problems": [
                "value is not of type null",
                "value matches no schema of oneOf",
            ],
        },
        {"path": "data.w[1]", "problems": ["value is not of type integer"]},
    ]


def test_many_branch_causes_at_one_path_stop_at_ten_and_say_how_many_more():
    branches = [{"required": [f"k{n:02}"]} for n in range(14)]
    spec = tool_of({"w": {"anyOf": branches}})
    problems = check(spec, "go", {"w": {}}).refusal["errors"][0]["problems"]
    assert len(problems) == 11
    assert problems[-1] == "and 5 more"


# Counting under a combinator: every offending path, at a small linear cost.


COMBINED = {
    "w": {"anyOf": [{"type": "array", "items": {"type": "number"}}, {"type": "null"}]}
}


def test_every_bad_item_under_a_combinator_is_counted():
    refusal = check(tool_of(COMBINED), "go", {"w": ["x"] * 5000}).refusal
    assert refusal["error_count"] == 5001
    assert "counting stopped" not in refusal["message"]
    assert paths(refusal)[:3] == ["data.w", "data.w[0]", "data.w[1]"]


def test_bad_objects_under_a_ref_count_each_offending_path():
    properties = {
        "w": {
            "$defs": {
                "i": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                }
            },
            "type": "array",
            "items": {"$ref": "#/properties/w/$defs/i"},
        }
    }
    refusal = check(tool_of(properties), "go", {"w": [{"a": "x", "b": "y"}] * 2000})
    assert refusal.refusal["error_count"] == 4000


def test_counting_under_a_combinator_grows_linearly():
    spec = tool_of(COMBINED)

    def cost(n):
        data = {"w": ["x"] * n}
        started = time.perf_counter()
        check(spec, "go", data)
        return time.perf_counter() - started

    cost(1000)
    small = min(cost(20_000) for _ in range(3))
    large = min(cost(80_000) for _ in range(3))
    assert large < small * 4 * 3, (small, large)


def test_a_value_nested_past_what_the_cast_reads_is_refused_not_raised():
    tree = {"$ref": "#/properties/t/$defs/t"}
    spec = tool_of(
        {
            "t": {
                **tree,
                "$defs": {
                    "t": {
                        "type": "object",
                        "properties": {"n": {"type": "integer"}, "k": tree},
                    }
                },
            }
        }
    )
    shallow = {"n": 1.0, "k": {"n": 2.0}}
    assert check(spec, "go", {"t": shallow}).data == {"t": {"n": 1, "k": {"n": 2}}}
    node = deep = {"n": 1.0}
    for _ in range(900):
        node["k"] = {"n": 2.0}
        node = node["k"]
    refusal = check(spec, "go", {"t": deep}).refusal
    assert refusal["errors"] == [
        {"path": "data", "problems": ["value could not be checked against the schema"]}
    ]


# unevaluatedProperties / unevaluatedItems: each refused value at its own path.


def test_each_value_unevaluated_properties_refuses_gets_its_path():
    spec = tool_of(
        {
            "o": {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "unevaluatedProperties": {"type": "integer"},
            },
            "f": {"properties": {"a": {}}, "unevaluatedProperties": False},
        }
    )
    sent = {"o": {"a": "x", "b": "1", "c": "2", "d": "3", "e": "4", "g": 5}}
    refusal = check(spec, "go", sent).refusal
    assert refusal["error_count"] == 4
    assert refusal["errors"] == [
        {"path": f"data.o.{key}", "problems": ["value is not of type integer"]}
        for key in "bcde"
    ]
    refusal = check(spec, "go", {"f": {"a": 1, "b": 1, "c": 2}}).refusal
    assert refusal["errors"] == [  # false refuses the keys as such: the problem text's
        {
            "path": "data.f",
            "problems": ["value has properties unevaluatedProperties does not allow"],
        }
    ]
    assert check(spec, "go", {"o": {"a": "x", "b": 1}}).accepted


def test_each_item_unevaluated_items_refuses_gets_its_path():
    spec = tool_of(
        {
            "l": {
                "type": "array",
                "prefixItems": [{"type": "string"}],
                "unevaluatedItems": {"type": "integer", "maximum": 5},
            },
            "m": {"prefixItems": [{}], "unevaluatedItems": {"multipleOf": 0.5}},
        }
    )
    refusal = check(spec, "go", {"l": ["x", "1", 2, 9, "4"]}).refusal
    assert refusal["error_count"] == 3
    assert refusal["errors"] == [
        {"path": "data.l[1]", "problems": ["value is not of type integer"]},
        {"path": "data.l[3]", "problems": ["value is higher than maximum 5"]},
        {"path": "data.l[4]", "problems": ["value is not of type integer"]},
    ]
    refusal = check(spec, "go", {"m": [0.3, 0.3, 1.5, 0.7]}).refusal
    assert paths(refusal) == ["data.m[1]", "data.m[3]"]
    assert refusal["errors"][0]["problems"] == ["value is not a multiple of 0.5"]


def test_many_values_unevaluated_items_refuses_are_all_counted():
    spec = tool_of({"l": {"prefixItems": [{}], "unevaluatedItems": {"type": "string"}}})
    refusal = check(spec, "go", {"l": [0] * 3000}).refusal
    assert refusal["error_count"] == 2999
    assert paths(refusal) == [f"data.l[{i}]" for i in range(1, 11)]


# Every level a body can have is walked; past the walk's DEPTH, each path it
# reaches is named with its own problems and the count is said partial.


def test_wrong_leaves_forty_levels_deep_each_get_their_path():
    schema = {"type": "integer"}
    for _ in range(40):
        schema = {"type": "array", "items": schema}
    value = ["x", 1, "y", 2, "z"]
    for _ in range(39):
        value = [value]
    refusal = check(tool_of({"d": schema}), "go", {"d": value}).refusal
    assert refusal["error_count"] == 3
    assert [e["problems"] for e in refusal["errors"]] == [
        ["value is not of type integer"]
    ] * 3
    assert "counting stopped early" not in refusal["message"]
    assert len(json.dumps(refusal["errors"])) < 4096


def test_past_the_walks_depth_each_path_reached_is_named_and_the_count_is_partial(
    monkeypatch,
):
    monkeypatch.setattr(_value_gate, "DEPTH", 4)
    assert UNNAMED.startswith("value does not match the schema; it is too large")
    schema = {"type": "integer"}
    for _ in range(8):
        schema = {"type": "array", "items": schema}
    leaf = ["x"]
    for _ in range(7):
        leaf = [leaf]
    refusal = check(tool_of({"d": schema}), "go", {"d": [leaf] * 12}).refusal
    assert refusal["error_count"] == 12  # ten walked, two counted, none below
    assert paths(refusal)[0] == "data.d[0][0][0][0]"  # DEPTH + 1 tokens, "d" the first
    assert refusal["errors"][0]["problems"] == [UNNAMED]  # the wrong is below
    assert "counting stopped early" in refusal["message"]
    tree = {"type": "array", "items": {"anyOf": [{"$ref": "#/properties/t"}, {}]}}
    tree["items"]["anyOf"][1] = {"type": "integer"}
    refusal = check(tool_of({"t": tree}), "go", {"t": leaf}).refusal
    assert paths(refusal)[-1] == "data.t[0][0][0][0]"  # the fourth level, reached
    assert refusal["errors"][-1]["problems"] == [
        "value is not of type integer",
        "value matches no schema of anyOf",
    ]
    assert "counting stopped early" in refusal["message"]
