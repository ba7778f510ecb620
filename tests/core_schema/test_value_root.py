import pytest

from wymcp.core.schema import ValueNode, close_schema
from wymcp.core.schema._value_root import build_value_root, compile_schema


def root_of(**properties) -> ValueNode:
    return build_value_root(close_schema({"type": "object", "properties": properties}))


def test_the_root_validator_asserts_format():
    root = root_of(day={"type": "string", "format": "date"})
    assert root.validator.is_valid({"day": "2026-07-28"})
    assert not root.validator.is_valid({"day": "tomorrow"})


def test_an_unknown_format_cannot_be_built_for_input_but_can_for_output():
    with pytest.raises(ValueError, match="Unknown format"):
        compile_schema({"format": "tomorrow-ish"})
    output = compile_schema({"format": "tomorrow-ish"}, assert_formats=False)
    assert output.is_valid("anything")


def test_nodes_follow_properties_items_and_prefix_items():
    root = root_of(
        pair={"type": "array", "prefixItems": [{"type": "integer"}], "items": {}},
        order={"type": "object", "properties": {"qty": {"type": "integer"}}},
    )
    assert root.closed
    assert root.properties["pair"].prefix_items[0].integer
    assert root.properties["pair"].items is not None
    order = root.properties["order"]
    assert order.integer_keys == ("qty",)
    assert root.casts
    assert dict(root.deeper_keys) == {"order": order, "pair": root.properties["pair"]}


def test_integer_follows_local_references_and_type_lists():
    root = build_value_root(
        {
            "type": "object",
            "$defs": {"n": {"type": "integer"}},
            "properties": {
                "a": {"$ref": "#/$defs/n"},
                "b": {"type": ["integer", "null"]},
                "c": {"type": ["integer", "number"]},
            },
        }
    )
    flags = {key: node.integer for key, node in root.properties.items()}
    assert flags == {"a": True, "b": True, "c": False}


def test_a_reference_that_leads_nowhere_cannot_be_built():
    with pytest.raises(ValueError, match="does not exist"):
        build_value_root({"properties": {"a": {"$ref": "#/$defs/missing"}}})


def test_every_position_has_its_own_validator_references_resolved():
    root = build_value_root(
        {
            "type": "object",
            "$defs": {"n": {"type": "integer", "multipleOf": 3}},
            "properties": {
                "a": {"$ref": "#/$defs/n"},
                "b": {"anyOf": [{"$ref": "#/$defs/n"}, {"type": "null"}]},
                "c": {"additionalProperties": {"$ref": "#/$defs/n"}},
                "d": {"patternProperties": {"^x": {"type": "string"}}},
            },
        }
    )
    a, b = root.properties["a"], root.properties["b"]
    assert a.validator.is_valid(9)
    assert not a.validator.is_valid(1.1060260653197888e18)
    assert a.all_of[0] is b.any_of[0].all_of[0]
    assert [branch.validator.is_valid(None) for branch in b.any_of] == [False, True]
    assert root.properties["c"].additional.all_of[0] is a.all_of[0]
    ((pattern, node),) = root.properties["d"].pattern_nodes
    assert pattern.is_valid("xy")
    assert not pattern.is_valid("y")
    assert node.validator.is_valid("s")
    assert root.plain
    assert not a.plain


def test_a_position_the_walk_cannot_split_is_opaque():
    root = root_of(
        plain={"type": "object", "properties": {"a": {"type": "string"}}},
        unevaluated={"prefixItems": [{}], "unevaluatedItems": False},
    )
    assert not root.properties["plain"].opaque
    assert root.properties["unevaluated"].opaque


def test_casts_follow_every_branch_and_reference_cycles_settle():
    root = build_value_root(
        {
            "type": "object",
            "$defs": {
                "tree": {
                    "type": "object",
                    "properties": {
                        "n": {"type": "integer"},
                        "kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}},
                    },
                }
            },
            "properties": {
                "t": {"$ref": "#/$defs/tree"},
                "s": {"anyOf": [{"type": "string"}]},
            },
        }
    )
    assert root.properties["t"].casts
    assert not root.properties["s"].casts
    tree = root.properties["t"].all_of[0]
    assert tree.properties["kids"].items.all_of[0] is tree


def test_closed_and_keyed_flags():
    root = root_of(
        free={"type": "object"},
        closed={"type": "object", "properties": {}},
        patterned={"patternProperties": {"^x": {}}, "additionalProperties": False},
        lettered={"patternProperties": {"\\p{L}": {}}, "additionalProperties": False},
    )
    assert not root.properties["free"].closed
    assert not root.properties["free"].keyed
    assert root.properties["closed"].closed
    assert root.properties["patterned"].closed
    assert len(root.properties["patterned"].pattern_nodes) == 1
    # a pattern Python's re cannot read is read by the engine, in both gates
    assert root.properties["lettered"].closed
    assert root.keyed
