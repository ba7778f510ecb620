"""Run a CPU-bound step in a worker thread that lets the event loop run meanwhile.

A thread in C code (the `json` scanner building lists) keeps the GIL until it
returns: the loop waits for all of it. Python code run at each collection
of the garbage collector lets the GIL pass to the loop every few hundred objects.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def yielding(work: Callable[[], T]) -> T:
    """Return `work()`, letting the GIL go to other threads at each collection."""

    def hook(phase: str, info: dict[str, Any]) -> None:  # its own: removed exactly
        """Runs (as Python code) at each collection: a point where the GIL can pass."""
        del phase, info

    gc.callbacks.append(hook)
    try:
        return work()
    finally:
        gc.callbacks.remove(hook)
