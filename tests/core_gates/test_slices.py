"""The engine asked in bounded runs answers what one call over the whole value does.

`SLICE` is set to 1 here, so every container is split as far as it goes: each
keyword, branch, property and item is asked on its own, and the verdicts, the
refusals and their paths must be the ones a single engine call gives.
"""

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core_gates.test_properties import (
    JSON_VALUES,
    SETTINGS,
    make_tool,
    oracle_accepts,
    tools_and_data,
)
from wymcp.core.gates import _slices, check
from wymcp.core.gates._slices import (
    assertion_holds,
    children_accept,
    cost,
    node_accepts,
    runs,
)
from wymcp.core.schema import Action, Tool, ValueNode, prepare


@contextlib.contextmanager
def sliced(units: int = 1) -> Iterator[None]:
    """Split every value past `units` (hypothesis forbids a function fixture)."""
    before = _slices.SLICE
    _slices.SLICE = units
    try:
        yield
    finally:
        _slices.SLICE = before


def nodes_of(root: ValueNode) -> list[ValueNode]:
    """Every node reachable from the root (`not` included)."""
    found: list[ValueNode] = []
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        found.append(node)
        stack.extend(node.links())
        if node.not_ is not None:
            stack.append(node.not_)
    return found


def engine(validator: object, value: object) -> bool:
    try:
        return bool(validator.is_valid(value))  # type: ignore[attr-defined]
    except (ValueError, TypeError, OverflowError, RecursionError):
        return False


@SETTINGS
@given(tools_and_data(), JSON_VALUES)
def test_every_node_split_to_single_values_gives_the_engines_verdict(
    case: Any, other: Any
) -> None:
    properties, required, groups, data = case
    root = prepare(make_tool(properties, required, groups)).actions["go"].root
    values = [data, other, *data.values()]
    with sliced():
        for node in nodes_of(root):
            for value in values:
                verdict = engine(node.validator, value)
                assert node_accepts(node, value) == verdict
                if isinstance(value, (dict, list)):  # split, never asked whole
                    assert _slices._holds(node, value) == verdict
                for keyword, check in node.assertions:
                    assert assertion_holds(node, keyword, check, value) == engine(
                        check, value
                    ), keyword
                if node.children_valid is not None:
                    assert children_accept(node, value) == engine(
                        node.children_valid, value
                    )


@SETTINGS
@given(tools_and_data())
def test_split_verdicts_and_refusals_are_those_of_one_call(case: Any) -> None:
    properties, required, groups, data = case
    tool = make_tool(properties, required, groups)
    whole = check(tool, "go", data)
    with sliced():
        split = check(tool, "go", data)
    assert split.accepted == whole.accepted
    assert split.accepted == oracle_accepts(properties, required, groups, data)
    assert split.refusal == whole.refusal
    assert split.data == whole.data


EQUAL_AS_JSON: list[Any] = [1, 1.0, True, 0, -0.0, False, None, 10**30, 1e30, int(1e30)]
EQUAL_AS_JSON += [2**64, 2.0**64, 2**53 + 1, 2.0**53, 2**63, 2.0**63, 0.1 + 0.2, 0.3]
EQUAL_AS_JSON += [[1], [1.0], [True], {"a": 1, "b": [2]}, {"b": [2.0], "a": 1}]
EQUAL_AS_JSON += [{"a": True}, {"a": 1}, "a", "1", 10**400, 10**400 + 1]


class Unique(Tool):
    """Arrays of unique items."""

    name = "unique"
    description = "Unique."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "keep": Action(
            description="Keep",
            properties={"items": {"type": "array", "uniqueItems": True}},
        )
    }

    async def run_action(self, action: str, data: Any, ctx: Any) -> object:
        return data


@SETTINGS
@given(st.lists(st.sampled_from(EQUAL_AS_JSON) | JSON_VALUES, max_size=8))
def test_unique_items_decided_in_python_are_the_engines_verdict(
    items: list[Any],
) -> None:
    node = prepare(Unique).actions["keep"].root.properties["items"]
    with sliced():
        assert node_accepts(node, items) == engine(node.validator, items), items


def test_unique_items_of_numbers_equal_as_json() -> None:
    node = prepare(Unique).actions["keep"].root.properties["items"]
    with sliced():
        pairs: list[list[Any]] = [[1, 1.0], [10**30, 1e30], [-0.0, 0], [[1], [1.0]]]
        for pair in pairs:
            assert node_accepts(node, pair) is False, pair
        for pair in ([True, 1], [2**64, 2.0**64], [0.1 + 0.2, 0.3], [1, "1"]):
            assert node_accepts(node, pair) is True, pair


class Tree(Tool):
    """A recursive `anyOf` under `uniqueItems`, `contains` and item bounds."""

    name = "tree"
    description = "Trees."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "grow": Action(
            description="Grow",
            properties={
                "tree": {
                    "type": "array",
                    "minItems": 2,
                    "maxItems": 50,
                    "uniqueItems": True,
                    "contains": {"type": "integer"},
                    "items": {
                        "anyOf": [
                            {"$ref": "#/properties/tree"},
                            {"type": "integer", "multipleOf": 7},
                        ]
                    },
                },
                "named": {
                    "type": "object",
                    "propertyNames": {"maxLength": 3},
                    "additionalProperties": {"$ref": "#/properties/tree"},
                },
            },
        )
    }

    async def run_action(self, action: str, data: Any, ctx: Any) -> object:
        return data


@pytest.mark.parametrize(
    ("tree", "accepted"),
    [
        ([7, [14, 0]], True),
        ([7, [14, 14]], False),  # uniqueItems, two levels down
        ([7, [[7, 0], 14]], True),
        ([7, [[7, 1], 14]], False),  # a leaf not a multiple of 7
        ([7, [[[7], 0]]], False),  # minItems, three levels down
        ([[7, 0], [14, 0]], False),  # contains: no integer at the top
        ([7, list(range(0, 7 * 60, 7))], False),  # maxItems
    ],
)
def test_array_keywords_hold_on_the_whole_array_at_every_level(
    tree: list[Any], accepted: bool
) -> None:
    data = {"tree": tree, "named": {"abc": tree}}
    with sliced():
        assert check(Tree, "grow", data).accepted is accepted
    assert check(Tree, "grow", data).accepted is accepted
    with sliced():
        assert check(Tree, "grow", {"named": {"abcd": [7, 0]}}).accepted is False


def test_runs_cover_every_item_once_within_the_slice() -> None:
    big = 7 * 10**4297
    items: list[Any] = [1, 2, [3, [4, 5]], big, "x", {"a": [1, 2, 3]}, big, big, 9]
    with sliced(8):
        found = list(runs(items, 1))
        assert [index for a, b, _ in found for index in range(a, b)] == list(
            range(1, len(items))
        )
        for a, b, large in found:
            weight = sum(cost(item, 1 << 62) for item in items[a:b])
            assert large == (weight > 8)
            assert large or weight <= 8
            assert not large or b == a + 1


PLAIN_SCALARS = st.sampled_from([0, 1, -1, 7, 2**64, 10**400, True, False, None, "a"])
NUMBERS = st.sampled_from([0.0, -0.0, 1.0, 1.5, 2.0**64, 1e30, 0.1 + 0.2, 0.3, 1e308])
FLAT_ITEMS = (
    st.lists(PLAIN_SCALARS | NUMBERS, max_size=3)
    | st.dictionaries(st.sampled_from("abc"), PLAIN_SCALARS | NUMBERS, max_size=3)
    | PLAIN_SCALARS
    | NUMBERS
)


@SETTINGS
@given(
    st.lists(FLAT_ITEMS, min_size=2, max_size=10),
    st.sampled_from([1, 2, 5]),
)
def test_unique_items_of_one_plain_shape_told_in_c_are_the_engines_verdict(
    items: list[Any], units: int
) -> None:
    # Arrays of plain scalars, of floats, of flat arrays or objects: told apart
    # in C (`_distinct`), in runs of `units`; key order, 1 and 1.0, true and 1.
    node = prepare(Unique).actions["keep"].root.properties["items"]
    with sliced(units):
        assert node_accepts(node, items) == engine(node.validator, items), items
        if _slices._distinct(items):
            assert engine(node.validator, items), items


@pytest.mark.parametrize(
    ("items", "unique"),
    [
        ([{"a": 1, "b": 2}, {"b": 2, "a": 1}], False),  # key order ignored
        ([{"a": 1}, {"a": True}], True),
        ([{"a": 1}, {"a": 1.0}], False),
        ([[1], [True]], True),
        ([[1, "x"], [1, "x"]], False),
        ([True, 1], True),
        ([-0.0, 0.0], False),
        ([2.0**64, 2**64], True),
        ([1e30, 10**30], False),
    ],
)
def test_unique_items_of_plain_shapes_equal_as_json(
    items: list[Any], unique: bool
) -> None:
    node = prepare(Unique).actions["keep"].root.properties["items"]
    with sliced():
        assert node_accepts(node, items) is unique


def test_distinct_plain_items_are_keyed_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    # `uniqueItems` over 100,000 objects built a key per item in Python (`_key`,
    # ~0.9 s per 4 MiB); one plain shape is now told apart in C, in runs.
    keyed: list[object] = []
    key = _slices._key
    monkeypatch.setattr(
        _slices, "_key", lambda value: keyed.append(value) or key(value)
    )
    node = prepare(Unique).actions["keep"].root.properties["items"]
    for items in (
        [{"a": i, "b": "x", "c": i % 2 == 0} for i in range(100_000)],
        [[i, None] for i in range(100_000)],
        [i + 0.5 for i in range(100_000)],
        [f"s{i}" for i in range(100_000)],
    ):
        assert cost(items, 1 << 62) > 4 * _slices.SLICE
        assert node_accepts(node, items) is True
        assert keyed == []
    twice = [{"a": i % 50_000} for i in range(100_000)]
    assert node_accepts(node, twice) is False  # a duplicate: keyed and confirmed
    assert keyed


def test_runs_weigh_flat_objects_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each object (or array) of a run was weighed by `cost`, a Python call per
    # item (~1.5 s per 4 MiB of `{"a": N}`); objects holding no container are
    # now weighed in C, with the same runs.
    weighed: list[object] = []
    monkeypatch.setattr(
        _slices, "cost", lambda value, cap: weighed.append(value) or cost(value, cap)
    )
    for items in ([{"a": i} for i in range(100_000)], [[i, i] for i in range(100_000)]):
        found = list(runs(items, 3))
        assert weighed == []
        per_run = _slices.SLICE // (1 + len(items[0]))  # the item and its values
        assert found[0][0] == 3
        assert all(b == a + per_run for a, b, _ in found[:-1])
        assert found[-1][1] == len(items)
        assert [a for a, _, _ in found[1:]] == [b for _, b, _ in found[:-1]]
        assert not any(large for _, _, large in found)
