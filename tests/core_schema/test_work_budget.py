"""The work budget: spent inside `work_budget`, unbounded outside, nested restored."""

import pytest

from wymcp.core.schema import OverBudgetError, spend_work, work_budget


def test_spending_past_the_budget_raises_and_only_inside_it():
    spend_work(10**9)  # no budget: nothing is bounded
    with work_budget(3):
        spend_work()
        spend_work(2)
        with pytest.raises(OverBudgetError):
            spend_work()
    spend_work(10**9)


def test_a_nested_budget_gives_back_the_outer_one():
    with work_budget(5):
        with work_budget(1), pytest.raises(OverBudgetError):
            spend_work(2)
        spend_work(5)
        with pytest.raises(OverBudgetError):
            spend_work()
