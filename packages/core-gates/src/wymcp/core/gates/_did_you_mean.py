"""`did_you_mean`: the declared key an unknown key was probably meant to be.

Edit distance (optimal string alignment, case ignored) in a band around the diagonal,
only for keys of at most 64 characters, under a shared budget of cells per refusal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from wymcp.core.gates._bound import FIRST, Path
from wymcp.core.schema import ValueNode

LONGEST = 64
"""Keys (sent or declared) longer than this are never compared."""

CELLS = 100_000
"""The most distance-table cells one refusal computes (then it suggests no more)."""


@attrs.define
class Budget:
    """The cells one refusal may still spend on edit distances."""

    cells: int = CELLS


def allowance(a: str, b: str) -> int:
    """The largest distance still read as a typo: 0 under 3 characters, then 1-3."""
    shorter = min(len(a), len(b))
    if shorter < 3:  # noqa: PLR2004 - 'a' vs 'b' is no typo
        return 0
    if shorter <= 5:  # noqa: PLR2004 - short words allow one edit
        return 1
    if shorter <= 10:  # noqa: PLR2004 - medium words allow two
        return 2
    return 3


def distance(a: str, b: str, limit: int, budget: Budget) -> int | None:
    """The OSA distance of two texts if it is at most `limit`, else None.

    Only the cells within `limit` of the diagonal are computed, and each one is
    charged to `budget`; an empty budget answers None.
    """
    if abs(len(a) - len(b)) > limit:
        return None
    width = len(b)
    worse = limit + 1
    before: list[int] = []
    previous = [j if j <= limit else worse for j in range(width + 1)]
    for i in range(1, len(a) + 1):
        low, high = max(1, i - limit), min(width, i + limit)
        budget.cells -= high - low + 1
        if budget.cells < 0:
            return None
        current = [worse] * (width + 1)
        current[0] = i if i <= limit else worse
        here = a[i - 1]
        for j in range(low, high + 1):
            cost = 0 if here == b[j - 1] else 1
            best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and here == b[j - 2] and a[i - 2] == b[j - 1]:
                best = min(best, before[j - 2] + 1)
            current[j] = best
        if min(current[low - 1 : high + 1]) > limit:
            return None
        before, previous = previous, current
    found = previous[width]
    return found if found <= limit else None


def closest(key: str, candidates: Iterable[str], budget: Budget) -> str | None:
    """The candidate nearest `key` within its allowance (first declared on a tie)."""
    if len(key) > LONGEST:
        return None
    folded = key.casefold()
    best: tuple[int, str] | None = None
    for candidate in candidates:
        if len(candidate) > LONGEST or candidate == key:
            continue
        limit = allowance(key, candidate)
        if best is not None:
            limit = min(limit, best[0] - 1)
        if limit < 0:
            break
        found = distance(folded, candidate.casefold(), limit, budget)
        if found is not None:
            best = (found, candidate)
    return None if best is None else best[1]


def data_matches(
    root: ValueNode, data: object, kept: Sequence[Path], budget: Budget
) -> list[tuple[Path, str]]:
    """`(unknown path, declared key it probably meant)` for the kept unknown keys."""
    found: list[tuple[Path, str]] = []
    for path in kept[:FIRST]:
        if not path:
            continue
        located = _locate(root, data, path[:-1])
        key = path[-1]
        if located is None or not isinstance(key, str):
            continue
        node, sent = located
        free = [k for k in node.properties if k not in sent]
        match = closest(key, free, budget)
        if match is not None:
            found.append((path, match))
    return found


def _locate(
    root: ValueNode, data: object, path: Path
) -> tuple[ValueNode, Mapping[Any, Any]] | None:
    """The schema node and the sent object at `path`, if both are objects."""
    node: ValueNode | None = root
    value = data
    for token in path:
        if node is None:
            return None
        if isinstance(value, dict) and isinstance(token, str):
            node = node.properties.get(token)
            value = value.get(token)
        elif isinstance(value, list) and isinstance(token, int):
            if not 0 <= token < len(value):
                return None
            prefix = node.prefix_items
            node = prefix[token] if token < len(prefix) else node.items
            value = value[token]
        else:
            return None
    if node is None or not isinstance(value, dict):
        return None
    return node, value
