"""The assertion helpers: they pass on the right answer and say why otherwise."""

from __future__ import annotations

import json

import pytest

from wymcp.testing import (
    Answer,
    assert_refused,
    assert_rpc_error,
    assert_succeeded,
    assert_tool_error,
)

REFUSAL = {
    "error": "invalid_values",
    "message": "Invalid value(s) for action 'place' at data.items[3].qty.",
    "tool": "orders",
    "action": "place",
    "errors": [
        {
            "path": "data.items[3].qty",
            "problems": ["value is higher than maximum 1000"],
        },
        {"path": "data.note", "problems": ["value length must be at most 10"]},
    ],
    "error_count": 2,
    "help": 'help {tool: "orders", action: "place"}',
}


def result(payload: object, *, is_error: bool) -> dict:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def test_assert_refused_checks_the_code_the_path_and_the_problem():
    refused = result(REFUSAL, is_error=True)
    found = assert_refused(
        refused,
        "invalid_values",
        path="data.items[3].qty",
        problem="value is higher than maximum 1000",
    )
    assert found == REFUSAL
    assert_refused(refused, problem="value length must be at most 10")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"error": "unknown_params"}, "expected a 'unknown_params' refusal"),
        ({"path": "data.items[2].qty"}, "expected the refusal to name"),
        (
            {"path": "data.note", "problem": "value is higher than maximum 1000"},
            "at 'data.note'",
        ),
        ({"problem": "value must be a string"}, "expected the problem"),
    ],
)
def test_assert_refused_fails_with_the_answer_in_the_message(kwargs, message):
    with pytest.raises(AssertionError, match=message) as failed:
        assert_refused(result(REFUSAL, is_error=True), **kwargs)
    assert "data.items[3].qty" in str(failed.value)


def test_the_paths_of_also_are_named_too():
    refusal = {
        "error": "invalid_arguments",
        "action": "place",
        "unknown": ["arguments.qty"],
        "also": {
            "missing_required_fields": {"missing": ["customer"]},
            "invalid_values": {
                "errors": [
                    {"path": "data.qty", "problems": ["value is not of type integer"]}
                ],
                "error_count": 1,
            },
        },
        "help": 'help {tool: "orders"}',
    }
    refused = result(refusal, is_error=True)
    assert_refused(refused, "invalid_arguments", path="data.customer")
    assert_refused(refused, path="data.qty", problem="value is not of type integer")
    with pytest.raises(AssertionError, match="expected the refusal to name"):
        assert_refused(refused, path="data.note")


def test_missing_fields_and_unknown_keys_are_paths_too():
    pointer = {"help": 'help {tool: "orders", action: "place"}'}
    missing = {
        "error": "missing_required_fields",
        "action": "place",
        "missing": ["customer"],
        **pointer,
    }
    assert_refused(result(missing, is_error=True), path="data.customer")
    plain = {
        "error": "missing_required_fields",
        "action": None,
        "missing": ["region"],
        **pointer,
    }
    assert_refused(result(plain, is_error=True), path="arguments.region")
    unknown = {
        "error": "unknown_params",
        "action": "place",
        "unknown": ["data.x.y"],
        **pointer,
    }
    assert_refused(result(unknown, is_error=True), "unknown_params", path="data.x.y")


def test_a_success_is_not_a_refusal_and_a_refusal_is_not_a_success():
    with pytest.raises(AssertionError, match="expected a refusal"):
        assert_refused(result({"ok": 1}, is_error=False))
    with pytest.raises(AssertionError, match="expected success, got isError"):
        assert_succeeded(result(REFUSAL, is_error=True))
    assert assert_succeeded(result({"ok": 1}, is_error=False)) == {"ok": 1}


def test_assert_tool_error_tells_a_tool_error_from_a_refusal():
    assert assert_tool_error(result("Nope.", is_error=True), "Nope") == "Nope."
    with pytest.raises(AssertionError, match="got a refusal"):
        assert_tool_error(result(REFUSAL, is_error=True))
    with pytest.raises(AssertionError, match="expected an isError result"):
        assert_tool_error(result("fine", is_error=False))
    with pytest.raises(AssertionError, match="expected 'Gone' in the error text"):
        assert_tool_error(result("Nope.", is_error=True), "Gone")


def test_json_rpc_errors_are_asserted_by_code():
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Bad"}}
    assert assert_rpc_error(error, -32602)["message"] == "Bad"
    with pytest.raises(AssertionError, match="expected JSON-RPC error -32601"):
        assert_rpc_error(error, -32601)
    with pytest.raises(AssertionError, match="expected a JSON-RPC error"):
        assert_rpc_error(result("fine", is_error=False))
    with pytest.raises(AssertionError, match="expected a result, got"):
        assert_succeeded(error)


def test_an_answer_without_a_body_says_so():
    with pytest.raises(AssertionError, match="HTTP 202 with no JSON-RPC answer"):
        assert_succeeded(Answer(status=202))


def test_a_huge_answer_is_cut_in_the_failure_message():
    huge = result("x" * 50_000, is_error=False)
    with pytest.raises(AssertionError) as failed:
        assert_refused(huge)
    assert len(str(failed.value)) < 2_200
