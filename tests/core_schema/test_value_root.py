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


def test_a_plain_composition_is_decomposed_and_combinators_are_not():
    root = root_of(
        plain={"type": "object", "properties": {"a": {"type": "string"}}},
        choice={"anyOf": [{"type": "string"}, {"type": "integer"}]},
        open={"type": "object", "additionalProperties": {"type": "string"}},
    )
    assert root.shallow is not None
    assert root.properties["plain"].shallow is not None
    assert root.properties["choice"].shallow is None
    assert root.properties["open"].shallow is None


def test_a_schema_tied_to_its_document_is_never_split():
    root = build_value_root(
        {
            "type": "object",
            "$defs": {"n": {"type": "integer"}},
            "properties": {"a": {"$ref": "#/$defs/n"}, "b": {"type": "string"}},
        }
    )
    assert root.shallow is None
    assert root.properties["b"].validator is None


def test_closed_and_keyed_flags():
    root = root_of(
        free={"type": "object"},
        closed={"type": "object", "properties": {}},
        patterned={"patternProperties": {"^x": {}}, "additionalProperties": False},
        unreadable={"patternProperties": {"\\p{L}": {}}, "additionalProperties": False},
    )
    assert not root.properties["free"].closed
    assert not root.properties["free"].keyed
    assert root.properties["closed"].closed
    assert root.properties["patterned"].closed
    assert len(root.properties["patterned"].patterns) == 1
    assert not root.properties["unreadable"].closed
    assert root.keyed
