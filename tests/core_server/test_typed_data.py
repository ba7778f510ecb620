"""When a typed action's data is read off the loop: its count of JSON values."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from wymcp.core.server._typed_data import more_values_than

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.text(max_size=3), inner, max_size=5)
    ),
    max_leaves=60,
)


def _values(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + sum(_values(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_values(v) for v in value)
    return 1


@settings(max_examples=500, deadline=None)
@given(JSON, st.integers(min_value=0, max_value=80))
def test_the_count_says_whether_the_data_holds_more_values_than_the_limit(
    data: Any, limit: int
) -> None:
    # a scalar alone is never "more" (the data of an action is an object)
    expected = _values(data) > limit if isinstance(data, dict | list) else False
    assert more_values_than(data, limit) is expected


def test_a_fifty_item_order_is_read_on_the_loop_and_a_larger_one_is_not() -> None:
    items = [{"sku": f"S{i}", "qty": i, "price": 1.5} for i in range(50)]
    order = {"customer": "c", "items": items}  # 1 + 2 + 50 * 4 = 203 values
    assert not more_values_than(order, 203)
    assert more_values_than(order, 202)
    deep: Any = 1
    for _ in range(500):
        deep = [deep]
    assert more_values_than(deep, 500)
    assert not more_values_than(deep, 501)
