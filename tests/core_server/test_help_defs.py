"""help hoists shared subschemas into `$defs` when that is smaller, and the
hoisted schemas validate data exactly as the inline ones (jsonschema oracle).
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from wymcp.core.schema import prepare
from wymcp.core.server import _help
from wymcp.core.server._help_defs import hoist_shared
from wymcp_tasks import Projects, Todos

SAMPLES: list[dict[str, Any]] = [
    {},
    {"id": 1},
    {"id": 0},
    {"id": "1"},
    {"id": 2, "title": "x"},
    {"id": 2, "title": ""},
    {"title": "Buy milk", "priority": 2, "due": "2026-01-02", "project": "home"},
    {"title": "Buy milk", "priority": 9},
    {"title": "Buy milk", "due": None, "project": None},
    {"status": "done", "priority": 1, "project": "home"},
    {"status": "Done"},
    {"text": "milk", "limit": 5},
    {"name": "home"},
    {"name": 5},
    {"unknown": 1},
]


def raw_help(
    monkeypatch: pytest.MonkeyPatch, tool: str, action: str | None = None
) -> dict[str, Any]:
    """The help answer with nothing hoisted (as before hoisting existed)."""
    with monkeypatch.context() as patched:
        patched.setattr(_help, "hoist_shared", lambda payload: payload)
        return answer(tool, action)


def answer(tool: str, action: str | None = None) -> dict[str, Any]:
    specs = [prepare(Todos()), prepare(Projects())]
    return _help.answer_help(specs, tool, action, lambda spec, name: None).payload


def size(value: object) -> int:
    return len(json.dumps(value, separators=(",", ":")).encode())


def action_schema(rendered: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": rendered["properties"],
        "required": rendered["required"],
        "additionalProperties": False,
    }
    return schema | ({"$defs": defs} if defs else {})


@pytest.mark.parametrize("tool", ["tasks", "projects"])
def test_help_hoists_what_repeats_and_is_smaller(monkeypatch, tool):
    before = raw_help(monkeypatch, tool)
    after = answer(tool)
    assert after["$defs"]
    assert "$defs" not in before
    assert size(after) < size(before)
    assert '"$ref":"#/$defs/' in json.dumps(after, separators=(",", ":"))


@pytest.mark.parametrize("tool", ["tasks", "projects"])
def test_hoisted_schemas_validate_data_as_the_inline_ones(monkeypatch, tool):
    before = raw_help(monkeypatch, tool)
    after = answer(tool)
    assert sorted(before["actions"]) == sorted(after["actions"])
    for name in before["actions"]:
        inline = jsonschema.Draft202012Validator(
            action_schema(before["actions"][name], {})
        )
        hoisted = jsonschema.Draft202012Validator(
            action_schema(after["actions"][name], after["$defs"])
        )
        for data in SAMPLES:
            assert hoisted.is_valid(data) is inline.is_valid(data), (name, data)


def test_nothing_repeated_is_returned_as_it_is():
    payload = {"properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}
    assert hoist_shared(payload) is payload


def test_a_small_repeat_is_not_hoisted_when_that_is_larger():
    payload = {"properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    assert hoist_shared(payload) is payload
