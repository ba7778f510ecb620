"""Makes the shared test modules in this folder importable by every test.

Tests run with `--import-mode=importlib` and no `__init__.py`, so a module
such as `schema_oracle` is reached through this one sys.path entry.
"""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.append(_TESTS)

from loop_watchdog import (  # noqa: E402 - importable once the path is set
    loop_watchdog,
    pytest_configure,
    pytest_runtest_call,
)

__all__ = ["loop_watchdog", "pytest_configure", "pytest_runtest_call"]
