"""The units the engine-read budgets charge: what check_fast's bound is made of."""

import pytest

from wymcp.core.gates._engine_reads import read_budget, spend_reading, spend_wide_ints
from wymcp.core.schema import OverBudgetError, spend_work, work_budget

# 1 (the root) + 1 (a list of narrow ints) + 1 + 2 + 1 (an object, 2**130 in two
# 64-bit units, -(2**64) in one) + 1 + 1 + 1 (a list, an empty list, an object
# whose bool is no int); strings, floats and narrow ints cost nothing.
_DATA = {
    "a": [1, 2, 3],
    "b": {"c": 2**130, "d": -(2**64), "e": 2**64 - 1, "f": 1.5},
    "g": [[], {"h": True}],
    "i": "x" * 100,
}
_UNITS = 9


def test_the_wide_int_pass_spends_a_unit_per_container_and_per_64_bits() -> None:
    with work_budget(_UNITS):
        spend_wide_ints(_DATA)
        with pytest.raises(OverBudgetError):
            spend_work(1)  # nothing was left: exactly _UNITS were spent
    with work_budget(_UNITS - 1), pytest.raises(OverBudgetError):
        spend_wide_ints(_DATA)


def test_a_list_of_wide_ints_is_read_one_by_one() -> None:
    data = [1, 2**200, -(2**128), 7]  # 1 + 3 + 2: min/max alone would say "wide"
    with work_budget(6):
        spend_wide_ints(data)
    with work_budget(5), pytest.raises(OverBudgetError):
        spend_wide_ints(data)


def test_a_read_budget_bounds_its_block_and_is_gone_after_it() -> None:
    with read_budget(3):
        spend_reading([1, 2])  # three values: the list and its two items
        with pytest.raises(OverBudgetError):
            spend_reading(1)
    spend_reading(list(range(10_000)))  # no budget runs: nothing to spend


def test_an_inner_read_budget_gives_the_outer_one_back() -> None:
    with read_budget(10):
        with pytest.raises(OverBudgetError), read_budget(1):
            spend_reading([1])
        spend_reading(list(range(9)))  # the outer budget's 10 units, unspent
        with pytest.raises(OverBudgetError):
            spend_reading(1)
