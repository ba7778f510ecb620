"""Makes the shared test modules in this folder importable by every test.

Tests run with `--import-mode=importlib` and no `__init__.py`, so a module
such as `schema_oracle` is reached through this one sys.path entry. Also
`serve_app`: applications served on a real port for one test (`served`).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.append(_TESTS)

from loop_watchdog import (  # noqa: E402 - importable once the path is set
    loop_watchdog,
    pytest_configure,
    pytest_runtest_call,
)
from served import ServeApp, serving  # noqa: E402 - found through the entry above

__all__ = ["loop_watchdog", "pytest_configure", "pytest_runtest_call", "serve_app"]


@pytest.fixture
async def serve_app() -> AsyncIterator[ServeApp]:
    """`await serve_app(app)`: its URL on 127.0.0.1, served until the test ends."""
    async for serve in serving():
        yield serve
