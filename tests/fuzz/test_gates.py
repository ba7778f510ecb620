"""Fuzz `wymcp.core.gates.check` with any JSON a caller could send.

Properties: `check` never raises, in strict and lenient mode, for any
action and any data; a verdict either accepts (and its data is JSON) or
carries a refusal whose request-dependent part stays under 4 KiB and which
points at `help`.
"""

from __future__ import annotations

import json
import os
from typing import Any, ClassVar

from hypothesis import example, given, settings
from hypothesis import strategies as st

from wymcp.core.gates import check
from wymcp.core.schema import Action, Tool

FUZZ = settings.get_profile(os.environ.get("WYMCP_FUZZ_PROFILE", "wymcp-fuzz"))
REQUEST_PART_LIMIT = 4096


class Orders(Tool):
    """Nested objects, arrays of objects, formats, enums, combinators, groups."""

    name = "orders"
    description = "Place and find orders."
    actions: ClassVar[dict[str, Action]] = {
        "place": Action(
            description="Place an order",
            properties={
                "customer": {"type": "string", "minLength": 1, "maxLength": 40},
                "due": {"type": "string", "format": "date"},
                "email": {"type": "string", "format": "email"},
                "priority": {"type": "integer", "minimum": 1, "maximum": 5},
                "items": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 50,
                    "uniqueItems": True,
                    "items": {
                        "type": "object",
                        "properties": {
                            "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$"},
                            "qty": {"type": "integer", "minimum": 1},
                            "price": {"type": "number", "exclusiveMinimum": 0},
                        },
                        "required": ["sku", "qty"],
                    },
                },
                "ship": {
                    "type": "object",
                    "properties": {
                        "mode": {"enum": ["post", "courier"]},
                        "address": {
                            "type": "object",
                            "properties": {"city": {"type": "string"}},
                        },
                    },
                },
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            },
            required=["customer", "items"],
            defaults={"priority": 3},
        ),
        "find": Action(
            description="Find an order",
            properties={"id": {"type": "integer"}, "ref": {"type": "string"}},
            required_one_of=[["id", "ref"]],
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        """Not called by these tests."""
        del ctx
        return {action: data}


class Plain(Tool):
    """A plain tool with a hand-written schema."""

    name = "plain"
    description = "A plain tool."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "q": {"type": "string", "maxLength": 10},
            "n": {"type": "integer", "multipleOf": 3},
        },
        "required": ["q"],
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Not called by these tests."""
        del ctx
        return arguments


KEYS = st.sampled_from(
    ["customer", "items", "sku", "qty", "price", "ship", "mode", "due", "id", "ref"]
) | st.text(max_size=12)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**301), max_value=10**301)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([2.0, 0.5, -0.0, 1e308])
    | st.text(max_size=40)
    | st.sampled_from(["2026-07-28", "2026-02-30", "ABC-12", "a@b.c", "post"])
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(KEYS, inner, max_size=6)
    ),
    max_leaves=30,
)
ITEMS = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "sku": JSON_VALUES,
            "qty": JSON_VALUES,
            "price": SCALARS,
            "x": SCALARS,
        },
    ),
    max_size=60,
)
ORDER_DATA = st.fixed_dictionaries(
    {},
    optional={
        "customer": SCALARS,
        "due": SCALARS,
        "email": SCALARS,
        "priority": SCALARS,
        "items": ITEMS | JSON_VALUES,
        "ship": JSON_VALUES,
        "note": SCALARS,
        "id": SCALARS,
        "ref": SCALARS,
        "extra": JSON_VALUES,
    },
)
ACTIONS = st.sampled_from(["place", "find", "nope"]) | SCALARS | JSON_VALUES


def request_part(refusal: dict[str, Any]) -> int:
    """The size of a refusal without the published schema it always carries."""
    rest = {key: value for key, value in refusal.items() if key != "input_schema"}
    return len(json.dumps(rest))


def assert_verdict(verdict: Any) -> None:
    """A verdict either accepts or carries a bounded refusal pointing at help."""
    if verdict.accepted:
        assert verdict.refusal is None
        json.dumps(verdict.data)
        return
    refusal = verdict.refusal
    assert isinstance(refusal["error"], str)
    assert isinstance(refusal["message"], str)
    assert refusal["help"].startswith("help")
    assert request_part(refusal) <= REQUEST_PART_LIMIT, refusal
    json.dumps(refusal)


@FUZZ
@given(action=ACTIONS, data=ORDER_DATA | JSON_VALUES, strict=st.booleans())
@example(
    action="place",
    data={"customer": "a", "items": [{"sku": "ABC-1", "qty": 2.0}]},
    strict=True,
)
@example(action="place", data={"items": [{"q": 1}] * 60, "k" * 500: 1}, strict=True)
@example(action=None, data=None, strict=False)
def test_check_never_raises_on_a_multi_action_tool(
    action: Any, data: Any, strict: bool
) -> None:
    assert_verdict(check(Orders, action, data, strict=strict))


@FUZZ
@given(
    arguments=JSON_VALUES | st.dictionaries(KEYS | st.just("q"), JSON_VALUES),
    strict=st.booleans(),
)
@example(arguments={"q": "x" * 11, "n": 10**300 + 1}, strict=True)
def test_check_never_raises_on_a_plain_tool(arguments: Any, strict: bool) -> None:
    assert_verdict(check(Plain, None, arguments, strict=strict))


@FUZZ
@given(
    depth=st.integers(1, 400),
    width=st.integers(1, 2000),
    key=st.text(min_size=1, max_size=2000),
)
def test_check_bounds_deep_wide_and_long_input(
    depth: int, width: int, key: str
) -> None:
    nested: Any = {key: 1}
    for _ in range(depth):
        nested = {"ship": nested, key: [nested]} if depth < 8 else {"ship": nested}
    data = {
        "customer": "c",
        "items": [{"sku": key, "qty": -1, key: 0}] * width,
        "ship": nested,
        **{f"{key}{i}": i for i in range(min(width, 500))},
    }
    verdict = check(Orders, "place", data)
    assert not verdict.accepted
    assert_verdict(verdict)
