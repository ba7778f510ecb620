"""Fixtures of the stdio tests; the harness is `stdio_harness` (this folder)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.append(HERE)

from stdio_harness import SMALL, RawClient, spawn  # noqa: E402 - after the path entry


async def _spawned(*args: str) -> AsyncIterator[RawClient]:
    """A child spawned with `args`, killed at the end if it still runs."""
    client = await spawn(*args)
    try:
        yield client
    finally:
        if client.process.returncode is None:
            client.process.kill()
            await client.process.wait()


@pytest.fixture
async def raw() -> AsyncIterator[RawClient]:
    """A `wymcp stdio` child serving the fixture settings."""
    async for client in _spawned():
        yield client


@pytest.fixture
async def small() -> AsyncIterator[RawClient]:
    """A child with a 2 KiB BODY_LIMIT, 1 s CALL_TIMEOUT and 0.5 s SHUTDOWN_GRACE."""
    async for client in _spawned(SMALL):
        yield client
