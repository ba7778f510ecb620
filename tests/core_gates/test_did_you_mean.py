"""The edit distance behind `did_you_mean`: right, banded and bounded in cost."""

import pytest

from wymcp.core.gates._did_you_mean import (
    CELLS,
    LONGEST,
    Budget,
    allowance,
    closest,
    distance,
)


def full_osa(a: str, b: str) -> int:
    """The textbook optimal-string-alignment table, every cell (the oracle)."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        table[i][0] = i
    for j in range(len(b) + 1):
        table[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            table[i][j] = min(
                table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost
            )
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
    return table[len(a)][len(b)]


WORDS = ["", "a", "ab", "ba", "abc", "acb", "title", "titel", "tilte", "url", "uri",
         "name", "nmae", "description", "descripton", "quantity", "qty", "kitten",
         "sitting", "ca", "abc", "priority", "prioirty", "xyz"]  # fmt: skip


@pytest.mark.parametrize("limit", [0, 1, 2, 3])
def test_the_banded_distance_agrees_with_the_full_table(limit):
    for a in WORDS:
        for b in WORDS:
            expected = full_osa(a, b)
            found = distance(a, b, limit, Budget())
            assert found == (expected if expected <= limit else None), (a, b)


@pytest.mark.parametrize(
    ("key", "candidates", "expected"),
    [
        ("titel", ["url", "title"], "title"),
        ("Title", ["title"], "title"),
        ("nmae", ["name", "note"], "name"),
        ("descripton", ["description"], "description"),
        ("prioirty", ["priority"], "priority"),
        ("x", ["y"], None),
        ("ab", ["ba"], None),
        ("colour", ["title", "url"], None),
        ("tilte", ["tile", "title"], "tile"),
        ("tittle", ["title", "tittles"], "title"),
    ],
)
def test_closest_picks_the_nearest_declared_key(key, candidates, expected):
    assert closest(key, candidates, Budget()) == expected


def test_a_tie_goes_to_the_first_declared():
    assert closest("cat", ["bat", "hat"], Budget()) == "bat"
    assert closest("cat", ["hat", "bat"], Budget()) == "hat"


def test_the_allowance_grows_with_the_length():
    assert [allowance("x" * n, "y" * n) for n in (2, 3, 5, 6, 10, 11, 64)] == [
        0,
        1,
        1,
        2,
        2,
        3,
        3,
    ]


def test_long_keys_are_never_compared():
    budget = Budget()
    assert closest("t" * (LONGEST + 1), ["t" * LONGEST], budget) is None
    assert closest("a" * 60_000, ["a" * 59_999], budget) is None
    assert budget.cells == CELLS


def test_the_cost_per_pair_is_bounded_by_the_band():
    budget = Budget()
    distance("a" * LONGEST, "b" * LONGEST, 3, budget)
    spent = CELLS - budget.cells
    assert spent <= LONGEST * 7


def test_an_empty_budget_stops_suggesting():
    budget = Budget(cells=3)
    assert closest("titel", ["title"], budget) is None
    assert closest("titel", ["title"], Budget()) == "title"
