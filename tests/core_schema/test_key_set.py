from wymcp.core.schema import close_properties, close_schema


def test_nested_objects_and_array_items_are_closed():
    closed = close_properties(
        {
            "order": {
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "items": {"type": "object", "properties": {"sku": {}}},
                    },
                    "pair": {
                        "type": "array",
                        "prefixItems": [{"properties": {"a": {}}}],
                    },
                },
            }
        }
    )
    order = closed["order"]
    assert order["additionalProperties"] is False
    assert order["properties"]["items"]["items"]["additionalProperties"] is False
    assert (
        order["properties"]["pair"]["prefixItems"][0]["additionalProperties"] is False
    )


def test_what_the_author_set_is_kept():
    closed = close_properties(
        {
            "open": {"properties": {"a": {}}, "additionalProperties": True},
            "typed": {"properties": {"a": {}}, "additionalProperties": {"type": "x"}},
            "evaluated": {"properties": {"a": {}}, "unevaluatedProperties": False},
        }
    )
    assert closed["open"]["additionalProperties"] is True
    assert closed["typed"]["additionalProperties"] == {"type": "x"}
    assert "additionalProperties" not in closed["evaluated"]


def test_combinators_are_not_entered_and_free_form_objects_stay_open():
    closed = close_properties(
        {
            "choice": {"anyOf": [{"properties": {"a": {}}}]},
            "free": {"type": "object"},
            "patterned": {"patternProperties": {"^x": {}}},
        }
    )
    assert "additionalProperties" not in closed["choice"]["anyOf"][0]
    assert "additionalProperties" not in closed["free"]
    assert closed["patterned"]["additionalProperties"] is False


def test_closing_never_changes_the_authors_schema():
    authored = {"type": "object", "properties": {"a": {"properties": {}}}}
    close_schema(authored)
    assert authored == {"type": "object", "properties": {"a": {"properties": {}}}}
