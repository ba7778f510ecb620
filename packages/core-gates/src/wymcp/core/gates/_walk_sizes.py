"""The sizes a refusal's walk remembers of the values it asks the engine about.

At each position the walk asks about the same value several times (each branch,
each assertion, its children); counting its values for the read budget and its
units for the split each time cost ~90% of a refused deep tree's CPU.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

from wymcp.core.gates import _slices
from wymcp.core.gates._engine_reads import spend_values, values_in

KEPT = 64
"""Values remembered at once; past it the memory starts empty."""
_UNBOUNDED = 1 << 62

_Sizes = dict[int, tuple[object, int, int]]
_SIZES: contextvars.ContextVar[_Sizes | None] = contextvars.ContextVar(
    "wymcp_walk_sizes", default=None
)


@contextlib.contextmanager
def remembered() -> Iterator[None]:
    """Remember the sizes of the containers asked about inside (one walk)."""
    token = _SIZES.set({})
    try:
        yield
    finally:
        _SIZES.reset(token)


def spend_small(value: object) -> bool | None:
    """Spend what an engine call over a container reads; whether it is one call.

    True when its units fit one `SLICE` (the engine is asked about it whole),
    False when it is split; None outside `remembered` or for a scalar (the
    caller spends and sizes it as usual). Each entry holds its value, so an id is
    never read for another object.
    """
    sizes = _SIZES.get()
    kind = value.__class__
    if sizes is None or (kind is not dict and kind is not list):
        return None
    entry = sizes.get(id(value))
    if entry is None or entry[0] is not value:
        if len(sizes) >= KEPT:
            sizes.clear()
        entry = (
            value,
            values_in(value, _UNBOUNDED),
            _slices.cost(value, _slices.SLICE),
        )
        sizes[id(value)] = entry
    spend_values(entry[1])
    return entry[2] <= _slices.SLICE
