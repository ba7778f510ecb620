"""How much the engine's errors about a value may weigh, told before asking."""

from wymcp.core.gates._error_cost import ERRORS_WEIGHT, errors_fit, errors_per_place
from wymcp.core.schema import close_schema
from wymcp.core.schema._value_root import build_value_root


def root_of(schema):
    return build_value_root(close_schema(schema))


def test_one_place_with_many_branches_makes_as_many_errors():
    node = root_of({"type": "array", "allOf": [{"minItems": 2 + i} for i in range(40)]})
    # the node and its 40 branches, each with one assertion (type; minItems)
    assert errors_per_place(node) == 2 + 40 * 2


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
