"""Enter `LIFESPAN` around a served engine: the one way every transport does it.

`enter_lifespan(settings, engine)` calls `settings.LIFESPAN(settings)` and makes
what it yields `engine.state` (every call's `ctx.state`) until the block ends;
its exit is bounded by SHUTDOWN_GRACE, and an exit that fails is logged once.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from wymcp.conf._settings import Settings

logger = logging.getLogger("wymcp.conf")


class LifespanExitError(Exception):
    """LIFESPAN's exit raised; the error was logged (with its traceback) already.

    Every runner ends with exit status 1 on it, without logging it again.
    """


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

    The exit gets SHUTDOWN_GRACE seconds: one still running then is cancelled,
    logged and not waited for. One that raises is logged and raised again as
    `LifespanExitError`.
    """
    factory = getattr(settings, "LIFESPAN", None)
    if factory is None:
        yield engine.state
        return
    manager = _manager(factory(settings))
    state = await manager.__aenter__()
    engine.state = state
    try:
        yield state
    except BaseException as error:
        engine.state = None
        await _leave(manager, settings, error)
        raise
    engine.state = None
    await _leave(manager, settings, None)


async def _leave(
    manager: contextlib.AbstractAsyncContextManager[Any],
    settings: Settings,
    error: BaseException | None,
) -> None:
    """Run `manager`'s exit within SHUTDOWN_GRACE; log what goes wrong."""
    grace = float(getattr(settings, "SHUTDOWN_GRACE", 10.0))
    if error is None:
        exiting = manager.__aexit__(None, None, None)
    else:
        exiting = manager.__aexit__(type(error), error, error.__traceback__)
    leaving = asyncio.ensure_future(exiting)
    leaving.add_done_callback(_retrieve)
    done, _ = await asyncio.wait({leaving}, timeout=grace)
    if not done:
        leaving.cancel()
        logger.warning(
            "wymcp: LIFESPAN's exit was still running %g s after it began "
            "(SHUTDOWN_GRACE); it was cancelled and not waited for",
            grace,
        )
        return
    if leaving.cancelled():
        return
    failure = leaving.exception()
    if failure is None or failure is error:
        return
    logger.error("wymcp: LIFESPAN's exit failed", exc_info=failure)
    raise LifespanExitError("LIFESPAN's exit failed (logged)") from None


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Mark a late exit's outcome as seen (an abandoned exit must not warn later)."""
    if not task.cancelled():
        task.exception()


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
