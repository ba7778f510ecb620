import pytest

from wymcp.core.gates import _value_gate
from wymcp.core.gates._engine_reads import values_in
from wymcp.core.gates._error_cost import VALUES_ASKED
from wymcp.core.gates._problem_texts import UNNAMED
from wymcp.core.gates._value_gate import (
    ERROR_WORK,
    LEAF_ERRORS,
    WALK_FLOOR,
    WALK_WORK,
    cast_integers,
    value_errors,
)
from wymcp.core.schema import close_schema
from wymcp.core.schema._value_root import build_value_root


def root_of(schema):
    return build_value_root(close_schema(schema))


ORDER = root_of(
    {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "maxItems": 3,
                "items": {
                    "type": "object",
                    "properties": {"qty": {"type": "integer"}, "n": {"type": "number"}},
                },
            },
            "grid": {
                "type": "array",
                "items": {"type": "array", "items": {"type": "integer"}},
            },
            "pair": {"prefixItems": [{"type": "integer"}, {"type": "string"}]},
        },
    }
)


def test_an_accepted_value_has_no_report():
    assert value_errors(ORDER, {"items": [{"qty": 1}]}) is None


def test_errors_are_reported_in_path_order_with_their_problems():
    report = value_errors(
        ORDER, {"items": [{"qty": "x"}, {"qty": 1.5}] * 3, "pair": ["a"]}
    )
    assert report is not None
    assert report.count == 8
    assert report.entries[:3] == [
        (("items",), ["value should have at most 3 items"]),
        (("items", 0, "qty"), ["value is not of type integer"]),
        (("items", 1, "qty"), ["value is not of type integer"]),
    ]
    assert report.entries[-1] == (("pair", 0), ["value is not of type integer"])


def test_past_ten_paths_the_rest_are_counted():
    report = value_errors(ORDER, {"grid": [["x"] * 50, "y", ["z"]]})
    assert report.count == 52
    assert len(report.entries) == 10
    assert report.entries[0] == (("grid", 0, 0), ["value is not of type integer"])


def test_a_value_the_engine_cannot_read_is_reported_not_raised():
    report = value_errors(ORDER, {"items": [{"n": float("nan")}]})
    assert report is not None
    assert report.count >= 1


def test_whole_floats_are_cast_where_the_schema_says_integer():
    sent = {
        "items": [{"qty": 2.0, "n": 2.0}, {"qty": 3}],
        "grid": [[1.0, 2], [3.0]],
        "pair": [4.0, "s"],
    }
    cast = cast_integers(ORDER, sent)
    assert cast == {
        "items": [{"qty": 2, "n": 2.0}, {"qty": 3}],
        "grid": [[1, 2], [3]],
        "pair": [4, "s"],
    }
    assert type(cast["items"][0]["qty"]) is int
    assert type(cast["items"][0]["n"]) is float
    assert type(sent["items"][0]["qty"]) is float
    assert cast["items"][1] is sent["items"][1]


def test_nothing_to_cast_returns_the_very_value():
    sent = {"items": [{"qty": 2}], "grid": [[1]]}
    assert cast_integers(ORDER, sent) is sent
    text_only = root_of({"type": "object", "properties": {"s": {"type": "string"}}})
    assert cast_integers(text_only, sent) is sent


def test_a_subtree_under_a_combinator_is_counted_whole():
    combined = root_of(
        {
            "type": "object",
            "properties": {"v": {"allOf": [{"items": {"type": "number"}}]}},
        }
    )
    report = value_errors(combined, {"v": ["x"] * 5000})
    assert not report.partial
    assert report.count == 5000
    assert len(report.entries) == 10


def test_a_position_that_cannot_be_split_is_walked_when_too_large_to_ask_about():
    # 3,000 values are past VALUES_ASKED: the engine is not asked (its errors
    # would be one per item), the position is walked instead: every item counted.
    opaque = root_of(
        {
            "type": "object",
            "properties": {
                "v": {"items": {"type": "number"}, "unevaluatedItems": False}
            },
        }
    )
    report = value_errors(opaque, {"v": ["x"] * 3000})
    assert not report.partial
    assert report.count == 3000
    assert report.entries[1] == (("v", 1), ["value is not of type number"])


def test_a_large_value_under_a_local_unevaluated_schema_names_each_refused_one():
    # Only the node's own prefixItems/properties evaluate here, so
    # `unevaluatedItems`/`unevaluatedProperties` are walked as `items` and
    # `additionalProperties` when the engine cannot be asked: a path per value.
    node = root_of(
        {
            "type": "object",
            "properties": {
                "l": {"prefixItems": [{}], "unevaluatedItems": {"type": "string"}},
                "o": {
                    "properties": {"a": {}},
                    "unevaluatedProperties": {"type": "string"},
                },
            },
        }
    )
    keys = {f"k{i}": i for i in range(400)}
    report = value_errors(node, {"l": [0] * 400, "o": {"a": 1, **keys}})
    assert not report.partial
    assert report.count == 399 + 400
    assert report.entries[0] == (("l", 1), ["value is not of type string"])


def test_a_large_value_that_only_the_engine_can_explain_is_said_partial():
    # `allOf` beside `unevaluatedItems` may evaluate items: past VALUES_ASKED the
    # position says its problems are not all named; the branch's own are.
    node = root_of(
        {
            "type": "object",
            "properties": {
                "v": {
                    "allOf": [{"prefixItems": [{"type": "number"}]}],
                    "unevaluatedItems": False,
                }
            },
        }
    )
    report = value_errors(node, {"v": ["x", *range(VALUES_ASKED)]})
    assert report.partial
    assert report.entries == [
        (("v",), [UNNAMED]),
        (("v", 0), ["value is not of type number"]),
    ]
    small = value_errors(node, {"v": ["x", 1]})
    assert small is not None
    assert not small.partial
    assert (("v", 0), ["value is not of type number"]) in small.entries


def test_an_array_whose_only_fault_is_its_length_is_one_path():
    report = value_errors(ORDER, {"items": [{"qty": 1}] * 10_000})
    assert report.count == 1
    assert report.entries == [(("items",), ["value should have at most 3 items"])]


def test_own_keywords_are_named_one_by_one():
    node = root_of(
        {
            "type": "object",
            "properties": {
                "v": {
                    "type": "array",
                    "minItems": 5,
                    "uniqueItems": True,
                    "contains": {"type": "string"},
                    "items": {"type": "integer"},
                }
            },
        }
    )
    report = value_errors(node, {"v": [1, 1]})
    assert report.entries == [
        (
            ("v",),
            [
                "value must contain an item matching contains",
                "value must contain unique items",
                "value should have at least 5 items",
            ],
        )
    ]


def test_the_fast_lane_casts_integer_items_and_objects_with_several_integer_keys():
    node = root_of(
        {
            "type": "object",
            "properties": {
                "ints": {"type": "array", "items": {"type": "integer"}},
                "pairs": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "a": {"type": "integer"},
                            "b": {"type": "integer"},
                        },
                    },
                },
            },
        }
    )
    cast = cast_integers(
        node, {"ints": [1.0, 2, 3.5], "pairs": [{"a": 1, "b": 2.0}, {"a": 3}]}
    )
    assert cast == {"ints": [1, 2, 3.5], "pairs": [{"a": 1, "b": 2}, {"a": 3}]}
    assert [type(v) for v in cast["ints"]] == [int, int, float]
    assert type(cast["pairs"][0]["b"]) is int


def test_engine_errors_of_many_small_positions_are_charged_to_the_walk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each item is a position the walk cannot split, small enough to ask the
    # engine about, and 200 matching patterns make 200 errors per item: 2,000
    # items cost 400,000 errors and 4.7 CPU-s (linear, uncharged: a 4 MiB body
    # would take minutes). Each error now costs ERROR_WORK of the walk's budget.
    patterns = {f"^.{{0,{i}}}": {"maxLength": 1} for i in range(1, 201)}
    node = root_of(
        {
            "type": "object",
            "properties": {
                "t": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "patternProperties": patterns,
                        "unevaluatedProperties": False,
                    },
                }
            },
        }
    )
    texts: list[int] = []
    real = _value_gate.problem_text
    monkeypatch.setattr(
        _value_gate, "problem_text", lambda error: texts.append(1) or real(error)
    )
    built = []
    for items in (2000, 4000):
        texts.clear()
        data = {"t": [{"k": "ab", "n": i} for i in range(items)]}
        report = value_errors(node, data)
        assert report is not None
        assert report.partial
        budget = WALK_FLOOR + WALK_WORK * values_in(data, 1 << 62)
        assert len(texts) <= budget // ERROR_WORK + LEAF_ERRORS
        built.append(len(texts))
    assert built[1] < 2.5 * built[0]


def test_the_position_where_the_read_budget_ran_out_is_named():
    # attack 14: 32 `anyOf` branches each read the 5,000-key object before any
    # path was kept; the refusal said the root "could not be checked".
    node = root_of(
        {
            "type": "object",
            "properties": {
                "v": {
                    "type": "object",
                    "anyOf": [{"required": [f"q{i}"]} for i in range(32)],
                }
            },
        }
    )
    report = value_errors(node, {"v": {f"k{i}": 1 for i in range(5000)}})
    assert report is not None
    assert report.partial
    assert report.entries == [(("v",), [UNNAMED])]


def test_a_key_the_engine_spells_as_a_number_is_the_object_s_own_key():
    # attack 16: the engine's path gives "00" and "+1" as 0 and 1; "0" was named
    # (never sent) or the walk raised KeyError (an internal error, served).
    node = root_of(
        {
            "type": "object",
            "properties": {
                "v": {
                    "type": "object",
                    "patternProperties": {"": {"type": "string"}},
                    "unevaluatedProperties": False,
                }
            },
        }
    )
    for key in ("00", "+1", "007"):
        report = value_errors(node, {"v": {key: 1}})
        assert report is not None
        assert report.entries == [(("v", key), ["value is not of type string"])]
    both = value_errors(node, {"v": {"007": 1, "7": "s"}})  # which one: untold
    assert both is not None
    assert [path for path, _ in both.entries] == [("v",)]
