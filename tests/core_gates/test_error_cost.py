"""How much the engine's errors about a value may weigh, told before asking."""

import json

from wymcp.core.gates._error_cost import ERRORS_WEIGHT, errors_fit, errors_per_place
from wymcp.core.schema import close_schema
from wymcp.core.schema._value_root import build_value_root


def root_of(schema):
    return build_value_root(close_schema(schema))


def counts(node, errors):
    """`errors` plus the quoted bytes of the place's schema (one per 32 or so)."""
    return (
        errors <= errors_per_place(node) <= errors + len(json.dumps(node.schema)) // 16
    )


def test_one_place_with_many_branches_makes_as_many_errors():
    node = root_of({"type": "array", "allOf": [{"minItems": 2 + i} for i in range(40)]})
    # the node and its 40 branches, each with one assertion (type; minItems)
    assert counts(node, 2 + 40 * 2)


def test_a_recursive_schema_is_counted_once_per_node():
    tree = root_of(
        {
            "$defs": {
                "t": {
                    "type": "array",
                    "items": {"anyOf": [{"$ref": "#/$defs/t"}, {"type": "integer"}]},
                }
            },
            "$ref": "#/$defs/t",
        }
    )
    assert 1 < errors_per_place(tree) < 10


def test_escaped_characters_and_copies_weigh():
    text = "\x01" * 1000  # 6,000 bytes in a message
    assert errors_fit([text], copies=1)
    assert not errors_fit([text], limit=6_000, copies=1)
    assert errors_fit([text], limit=ERRORS_WEIGHT, copies=80)
    assert not errors_fit([text], limit=ERRORS_WEIGHT, copies=200)


def test_patterns_of_one_schema_each_count_for_every_key():
    # attack 10: 200 patterns matching every key, all of one schema (one node)
    many = root_of(
        {
            "type": "object",
            "patternProperties": {
                "^" + "(?:)" * i: {"maxLength": 1} for i in range(200)
            },
            "unevaluatedProperties": False,
        }
    )
    assert errors_per_place(many) >= 2 * 200


def test_a_property_and_the_patterns_matching_its_key_count_together():
    node = root_of(
        {
            "type": "object",
            "properties": {"k": {"allOf": [{"maxLength": 1 + i} for i in range(10)]}},
            "patternProperties": {"^k": {"maxLength": 1}, "k$": {"minLength": 9}},
        }
    )
    # the property (its node, 10 branches of one keyword) and two patterns
    assert counts(node, 1 + 10 * 2 + 2 * 2)


def test_property_names_count_their_keywords_for_every_key():
    # attack 11: 200 errors per key from propertyNames, which no node stands for
    node = root_of(
        {
            "type": "object",
            "propertyNames": {"allOf": [{"maxLength": 1 + i} for i in range(200)]},
            "unevaluatedProperties": False,
        }
    )
    assert errors_per_place(node) >= 200


def test_a_dynamic_reference_lets_no_value_be_asked_about():
    # attack 11: its target is chosen by the data, so its errors cannot be told
    node = root_of(
        {
            "$defs": {
                "s": {
                    "$dynamicAnchor": "s",
                    "allOf": [{"maxLength": 1 + i} for i in range(200)],
                }
            },
            "type": "object",
            "properties": {"k": {"$dynamicRef": "#s"}},
            "unevaluatedProperties": False,
        }
    )
    assert errors_per_place(node) >= ERRORS_WEIGHT
    assert not errors_fit({"k": "a"}, copies=errors_per_place(node))


def test_a_node_counts_the_bytes_of_its_whole_schema():
    # attack 13: every `not` error quotes its whole subschema, annotations too
    plain = root_of({"not": {"type": "integer"}})
    described = root_of({"not": {"type": "integer", "description": "d" * 32_000}})
    assert errors_per_place(described) >= errors_per_place(plain) + 1000


def _levels(reference: bool) -> dict:
    """Three levels of items, each applying the next through 8 `allOf` branches."""
    leaf = {"type": "string", "minimum": 5, "maximum": 0, "multipleOf": 7}
    defs = {"L2": leaf}
    for level in (1, 0):
        below = (
            {"$ref": f"#/$defs/L{level + 1}"} if reference else defs[f"L{level + 1}"]
        )
        defs[f"L{level}"] = {"items": {"allOf": [below] * 8}}
    top = {"$ref": "#/$defs/L0"} if reference else defs["L0"]
    return {"type": "array", "allOf": [top], "unevaluatedItems": False, "$defs": defs}


def test_a_node_applied_by_several_references_counts_each_time_below():
    # attack 16: 8 `$ref`s to one target at one place counted its items once;
    # the engine applies them 8 times per level (64 x the leaf's errors here).
    written_out = errors_per_place(root_of(_levels(reference=False)))
    referenced = errors_per_place(root_of(_levels(reference=True)))
    assert written_out >= 64 * 4
    assert referenced >= written_out


def test_another_node_s_additional_properties_applies_to_a_named_key():
    # attack 17: one branch names `a`, another's additionalProperties also
    # applies to it; under recursion the engine's errors double per level
    # (16 levels, 112 bytes: 2.9 GB) while the weight counted one branch.
    again = {"$ref": "#/$defs/r"}
    recursive = {
        "allOf": [{"properties": {"a": again}}, {"additionalProperties": again}],
        "minimum": 5,
    }
    node = root_of(
        {
            "type": "object",
            "allOf": [again],
            "unevaluatedProperties": False,
            "$defs": {"r": recursive},
        }
    )
    assert errors_per_place(node) >= 2**10
