"""Enter `LIFESPAN` around a served engine: the one way every transport does it.

`enter_lifespan(settings, engine)` calls `settings.LIFESPAN(settings)` and makes
what it yields `engine.state` (every call's `ctx.state`) until the block ends.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from wymcp.conf._settings import Settings


class HoldsState(Protocol):
    """An engine (or what a transport serves in its place) with `state`."""

    state: Any


@contextlib.asynccontextmanager
async def enter_lifespan(settings: Settings, engine: HoldsState) -> AsyncIterator[Any]:
    """Enter `LIFESPAN(settings)`; what it yields is `engine.state` inside the block.

    Without `LIFESPAN` the block runs with `engine.state` left as it is (None).
    A factory that returns neither an async context manager nor an async
    generator raises `TypeError` naming what it returned. Left after the
    block, `engine.state` is None again.
    """
    factory = getattr(settings, "LIFESPAN", None)
    if factory is None:
        yield engine.state
        return
    async with _manager(factory(settings)) as state:
        engine.state = state
        try:
            yield state
        finally:
            engine.state = None


def _manager(made: object) -> contextlib.AbstractAsyncContextManager[Any]:
    """An async context manager from what LIFESPAN returned (or an async generator)."""
    if hasattr(made, "__aenter__") and hasattr(made, "__aexit__"):
        return made
    if inspect.isasyncgen(made):
        return contextlib.asynccontextmanager(lambda: made)()
    raise TypeError(
        "LIFESPAN must return an async context manager (an @asynccontextmanager"
        f" function) or be an async generator function, not {type(made).__name__}"
    )
