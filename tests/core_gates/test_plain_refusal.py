"""`plain_refusal`: the gates' answer without the MCP envelope, for REST services."""

import json

from wymcp.core.gates import Verdict, check, plain_refusal
from wymcp.core.schema import Action, Tool


class Orders(Tool):
    name = "orders"
    description = "Place orders"
    actions = {  # noqa: RUF012 - the pinned declaration style
        "place": Action(
            description="Place an order",
            properties={
                "customer": {"type": "string", "minLength": 1},
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "sku": {"type": "string"},
                            "qty": {"type": "integer", "minimum": 1},
                        },
                        "required": ["sku", "qty"],
                    },
                },
                "a.b": {"type": "integer"},
                "pick": {
                    "type": "object",
                    "properties": {"0": {"type": "integer"}},
                },
            },
            required=["customer", "items"],
            required_one_of=[["customer"]],
        ),
    }

    async def run_action(self, action, data, ctx):
        return data


class Search(Tool):
    name = "search"
    description = "A tool without actions"
    input_schema = {  # noqa: RUF012 - the pinned declaration style
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["query"],
    }

    async def run(self, arguments, ctx):
        return arguments


def test_an_accepted_verdict_has_no_plain_refusal():
    verdict = check(Orders, "place", {"customer": "Ada", "items": []})
    assert verdict.accepted
    assert plain_refusal(verdict) is None


def test_unknown_keys_in_the_plain_form():
    verdict = check(Orders, "place", {"custmer": "Ada", "items": [], "x": 1})
    assert plain_refusal(verdict) == {
        "error": "unknown_params",
        "message": (
            "Unknown field(s): custmer, x. These are rejected rather than silently"
            " ignored."
        ),
        "unknown": ["custmer", "x"],
        "unknown_count": 2,
        "missing": ["customer"],
        "did_you_mean": {"custmer": "customer"},
    }


def test_invalid_values_in_the_plain_form():
    verdict = check(
        Orders,
        "place",
        {
            "customer": "",
            "items": [{"sku": "a", "qty": 0}],
            "a.b": "x",
            "pick": {"0": "y"},
        },
    )
    refusal = plain_refusal(verdict)
    assert refusal is not None
    assert refusal["error"] == "invalid_values"
    paths = [entry["path"] for entry in refusal["errors"]]
    assert paths == ['["a.b"]', "customer", "items[0].qty", 'pick["0"]']
    assert refusal["message"] == (
        'Invalid value(s) at ["a.b"], customer, items[0].qty and 1 more; see errors.'
    )
    assert refusal["error_count"] == 4
    assert set(refusal) == {"error", "message", "errors", "error_count"}


def test_missing_fields_and_groups_in_the_plain_form():
    refusal = plain_refusal(check(Orders, "place", {}))
    assert refusal == {
        "error": "missing_required_fields",
        "message": "Required fields missing: customer, items.",
        "missing": ["customer", "items"],
    }


def test_a_body_that_is_no_object_is_refused_at_the_root():
    refusal = plain_refusal(check(Orders, "place", [1, 2]))
    assert refusal is not None
    assert refusal["errors"] == [
        {"path": "", "problems": ["value is not of type object"]}
    ]
    assert refusal["message"] == "Invalid value(s) at (root); see errors."


def test_an_unknown_action_names_the_valid_ones_without_the_tool():
    refusal = plain_refusal(check(Orders, "nope", {}))
    assert refusal == {
        "error": "unknown_action",
        "message": "Unknown action 'nope'. Valid actions: place.",
        "valid_actions": ["place"],
    }


def test_a_tool_without_actions_drops_the_arguments_prefix():
    refusal = plain_refusal(check(Search, None, {"query": 5, "limit": "x"}))
    assert refusal is not None
    assert [entry["path"] for entry in refusal["errors"]] == ["limit", "query"]
    refusal = plain_refusal(check(Search, None, {"qury": "x"}))
    assert refusal is not None
    assert refusal["unknown"] == ["qury"]
    assert refusal["missing"] == ["query"]
    assert refusal["did_you_mean"] == {"qury": "query"}


def test_the_schema_is_kept_on_request():
    verdict = check(Orders, "place", {"bogus": 1})
    refusal = plain_refusal(verdict, schema=True)
    assert refusal is not None
    assert refusal["input_schema"]["required"] == ["customer", "items"]
    assert "input_schema" not in (plain_refusal(verdict) or {})


def test_no_envelope_field_and_no_data_prefix_remain():
    for action, body in [
        ("place", {"bogus": 1, "items": [{"sku": "a", "qty": 1, "zz": 1}]}),
        ("place", {"customer": 5, "items": [{"qty": "x"}]}),
        ("place", {}),
        ("nope", {}),
    ]:
        refusal = plain_refusal(check(Orders, action, body))
        assert refusal is not None
        assert not {"tool", "action", "help"} & set(refusal)
        assert "data." not in json.dumps(refusal)
        assert "data[" not in json.dumps(refusal)


def test_the_verdict_itself_is_left_as_it_was():
    verdict = check(Orders, "place", {"bogus": 1})
    before = json.dumps(verdict.refusal)
    plain_refusal(verdict)
    assert json.dumps(verdict.refusal) == before
    assert isinstance(verdict, Verdict)
