import pytest

from wymcp.core.gates import check
from wymcp.core.schema import Action, Tool

CASES = [
    ({"type": "integer"}, "x", "value is not of type integer"),
    ({"type": ["integer", "null"]}, "x", "value is not of type integer or null"),
    ({"minimum": 5}, 1, "value is lower than minimum 5"),
    ({"maximum": 100}, 101, "value is higher than maximum 100"),
    ({"exclusiveMinimum": 1}, 1, "value is not higher than exclusive minimum 1"),
    ({"exclusiveMaximum": 1.5}, 2, "value is not lower than exclusive maximum 1.5"),
    ({"multipleOf": 3}, 4, "value is not a multiple of 3"),
    ({"minLength": 2}, "x", "value length must be at least 2"),
    ({"maxLength": 1}, "xyz", "value length must be at most 1"),
    ({"minItems": 2}, [1], "value should have at least 2 items"),
    ({"maxItems": 1}, [1, 2], "value should have at most 1 items"),
    ({"uniqueItems": True}, [1, 1], "value must contain unique items"),
    (
        {"minProperties": 1, "type": "object"},
        {},
        "value must have at least 1 properties",
    ),
    (
        {"maxProperties": 0, "additionalProperties": True},
        {"a": 1},
        "value must have at most 0 properties",
    ),
    ({"format": "date"}, "tomorrow", "value does not respect the 'date' format"),
    (
        {"format": "uri-template"},
        "{bad",
        "value does not respect the 'uri-template' format",
    ),
    ({"enum": ["a", "b"]}, "c", 'value must be one of the enum values: "a" or "b"'),
    ({"const": "a"}, "b", 'value should be "a"'),
    ({"pattern": "^x"}, "y", "value does not conform to pattern /^x/"),
    (
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        1,
        [
            "value is not of type null",
            "value is not of type string",
            "value matches no schema of anyOf",
        ],
    ),
    (
        {"oneOf": [{"type": "string"}]},
        1,
        ["value is not of type string", "value matches no schema of oneOf"],
    ),
    (
        {"oneOf": [{}, {"type": "integer"}]},
        1,
        "value matches more than one schema of oneOf",
    ),
    ({"not": {"type": "integer"}}, 1, "value must not match the schema of not"),
    (False, 1, "no value is allowed here"),
    ({"required": ["a"], "type": "object"}, {}, "property 'a' is required"),
    (
        {"dependentRequired": {"a": ["b"]}, "additionalProperties": True},
        {"a": 1},
        "property 'b' is required when property 'a' is present",
    ),
    (
        {"dependentRequired": {"a": ["b"]}, "unevaluatedProperties": True},
        {"a": 1},
        "property 'b' is required when property 'a' is present",
    ),
    (
        {"propertyNames": {"maxLength": 1}, "additionalProperties": True},
        {"long": 1},
        "value has property names propertyNames does not allow",
    ),
    (
        {"anyOf": [{"properties": {"a": {}}, "additionalProperties": False}]},
        {"b": 1},
        [
            "value has properties additionalProperties does not allow",
            "value matches no schema of anyOf",
        ],
    ),
    (
        {"allOf": [{"properties": {"a": {}}, "additionalProperties": False}]},
        {"b": 1},
        "value has properties additionalProperties does not allow",
    ),
    (
        {"allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": False},
        {"b": 1},
        "value has properties unevaluatedProperties does not allow",
    ),
    (
        {"prefixItems": [{}], "unevaluatedItems": False},
        [1, 2],
        "value has items unevaluatedItems does not allow",
    ),
    (
        {"contains": {"type": "string"}},
        [1],
        "value must contain an item matching contains",
    ),
    (
        {"contains": {"type": "integer"}, "minContains": 2},
        [1],
        "value has fewer items matching contains than minContains",
    ),
    (
        {"contains": {"type": "integer"}, "maxContains": 1},
        [1, 2],
        "value has more items matching contains than maxContains",
    ),
    (
        {"if": {"type": "integer"}, "then": {"minimum": 5}},
        1,
        "value is lower than minimum 5",
    ),
]


def refusal_for(schema, value):
    class One(Tool):
        name = "one"
        description = "d"
        actions = {"a": Action(description="d", properties={"v": schema})}  # noqa: RUF012 - the pinned declaration style

        async def run_action(self, action, data, ctx):
            return data

    return check(One, "a", {"v": value}).refusal


@pytest.mark.parametrize(("schema", "value", "text"), CASES)
def test_every_keyword_has_its_own_text(schema, value, text):
    refusal = refusal_for(schema, value)
    assert refusal["error"] == "invalid_values"
    texts = text if isinstance(text, list) else [text]
    assert refusal["errors"] == [{"path": "data.v", "problems": texts}]


@pytest.mark.parametrize(("schema", "value", "text"), CASES)
def test_no_text_quotes_the_sent_value(schema, value, text):
    del text
    secret = "s3cr3t-" * 3
    sent = value
    if isinstance(value, str):
        sent = secret
    refusal = refusal_for(schema, sent)
    if refusal is not None:
        assert secret not in str(refusal["errors"])


def test_a_huge_number_is_never_quoted():
    refusal = refusal_for({"maximum": 100}, 10**301)
    assert refusal["errors"][0]["problems"] == ["value is higher than maximum 100"]
    assert "1000000" not in str(refusal)


def test_problems_at_one_path_are_sorted_deduplicated_and_bounded():
    schema = {
        "allOf": [{"pattern": f"^{i:02}"} for i in range(13)] + [{"pattern": "^00"}]
    }
    problems = refusal_for(schema, "zz")["errors"][0]["problems"]
    assert problems == [
        *(f"value does not conform to pattern /^{i:02}/" for i in range(10)),
        "and 3 more",
    ]


def test_a_long_schema_derived_text_is_cut():
    refusal = refusal_for({"enum": ["x" * 500]}, "y")
    (text,) = refusal["errors"][0]["problems"]
    assert len(text) == 120
    assert text.endswith("…")
