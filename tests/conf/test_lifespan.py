"""`enter_lifespan`: its exit is bounded by SHUTDOWN_GRACE; a failing exit is told."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from wymcp.conf import LifespanExitError, Settings, enter_lifespan

WAIT = 30.0


class Engine:
    state: Any = None


@contextlib.asynccontextmanager
async def hangs(settings: Settings) -> AsyncIterator[str]:
    del settings
    try:
        yield "state"
    finally:
        await asyncio.sleep(3600)


@contextlib.asynccontextmanager
async def raises(settings: Settings) -> AsyncIterator[str]:
    del settings
    yield "state"
    raise RuntimeError("the pool would not close")


LEFT: list[str] = []


@contextlib.asynccontextmanager
async def records(settings: Settings) -> AsyncIterator[str]:
    del settings
    try:
        yield "state"
    finally:
        LEFT.append("left")


async def _enter_and_leave(factory: object) -> Engine:
    engine = Engine()
    settings = Settings().evolve(LIFESPAN=factory, SHUTDOWN_GRACE=0.2)
    async with enter_lifespan(settings, engine) as state:
        assert state == "state"
        assert engine.state == "state"
    return engine


async def test_an_exit_still_running_after_the_grace_is_cancelled_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="wymcp.conf")
    engine = await asyncio.wait_for(_enter_and_leave(hangs), WAIT)
    assert engine.state is None
    assert [record.getMessage() for record in caplog.records] == [
        (
            "wymcp: LIFESPAN's exit was still running 0.2 s after it began"
            " (SHUTDOWN_GRACE); it was cancelled and not waited for"
        )
    ]


async def test_an_exit_that_raises_is_logged_once_and_raised_as_lifespan_exit_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="wymcp.conf")
    with pytest.raises(LifespanExitError) as raised:
        await asyncio.wait_for(_enter_and_leave(raises), WAIT)
    assert raised.value.__cause__ is None
    [record] = caplog.records
    assert record.levelno == logging.ERROR
    assert record.getMessage() == "wymcp: LIFESPAN's exit failed"
    assert record.exc_info is not None
    assert str(record.exc_info[1]) == "the pool would not close"


async def test_an_error_in_the_block_still_leaves_and_propagates_as_it_is() -> None:
    LEFT.clear()
    engine = Engine()
    settings = Settings().evolve(LIFESPAN=records, SHUTDOWN_GRACE=0.2)
    with pytest.raises(KeyError, match="inside"):
        async with enter_lifespan(settings, engine):
            raise KeyError("inside")
    assert LEFT == ["left"]
    assert engine.state is None
