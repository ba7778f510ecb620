"""`check_fast` skips counting data from a small JSON text: the bound holds by size."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wymcp.core.gates import _check, check, check_fast
from wymcp.core.gates._check import FAST_VALUES, SMALL_JSON
from wymcp.core.gates._engine_reads import values_in
from wymcp.core.gates._slices import SLICE, cost
from wymcp.core.schema import Action, Tool

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**64, max_value=10**200)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=12)
        | st.dictionaries(st.text(max_size=3), inner, max_size=6)
    ),
    max_leaves=400,
)


class Numbers(Tool):
    name = "numbers"
    description = "d"
    actions = {  # noqa: RUF012 - the pinned declaration style
        "sum": Action(
            description="Sum numbers",
            properties={
                "v": {"type": "array", "items": {"type": "integer", "minimum": 0}}
            },
            required=["v"],
        )
    }

    async def run_action(self, action, data, ctx):
        return data


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(JSON)
def test_data_of_a_small_text_is_under_the_counts_check_fast_would_make(value):
    text = json.dumps(value, separators=(",", ":"))
    if len(text.encode()) <= SMALL_JSON:
        assert cost(value, SLICE + 1) <= SLICE
        assert values_in(value, FAST_VALUES + 1) <= FAST_VALUES


def test_the_widest_int_a_small_text_holds_is_under_a_slice():
    widest = int("9" * SMALL_JSON)  # the text is its digits: SMALL_JSON bytes
    assert len(str(widest)) == SMALL_JSON
    assert cost(widest, SLICE + 1) <= SLICE
    many = [0] * (SMALL_JSON // 2)  # "[0,0,...]": a value per two bytes
    assert len(json.dumps(many, separators=(",", ":"))) <= SMALL_JSON + 1
    assert cost(many, SLICE + 1) <= SLICE


def test_a_small_text_is_decided_without_counting_and_as_before(monkeypatch):
    counted: list[object] = []

    def counting(value: object, cap: int) -> int:
        counted.append(value)
        return cost(value, cap)

    monkeypatch.setattr(_check, "cost", counting)
    for data in ({"v": [1, 2, 3]}, {"v": [1, -2]}, {"v": [2**70]}, {"x": 1}):
        text = json.dumps(data).encode()
        small = check_fast(Numbers, "sum", data, json_bytes=len(text))
        assert counted == []  # decided without the count
        assert small == check_fast(Numbers, "sum", data)  # counted: same answer
        assert counted  # the call without json_bytes counted
        counted.clear()
        if small is not None:
            assert small == check(Numbers, "sum", data)


def test_a_large_text_is_counted_and_left_to_the_thread():
    data = {"v": list(range(SLICE))}
    text = json.dumps(data).encode()
    assert len(text) > SMALL_JSON
    assert check_fast(Numbers, "sum", data, json_bytes=len(text)) is None
    assert check(Numbers, "sum", data).accepted
