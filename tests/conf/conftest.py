"""Throw-away settings modules, and an environment without WYMCP_ variables."""

from __future__ import annotations

import itertools
import os
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

_COUNTER = itertools.count()


@pytest.fixture
def settings_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str], str]]:
    """Return a function writing `source` as a fresh module and giving its name."""
    monkeypatch.syspath_prepend(str(tmp_path))
    written: list[str] = []

    def write(source: str) -> str:
        name = f"wymcp_test_settings_{next(_COUNTER)}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


@pytest.fixture(autouse=True)
def no_wymcp_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every WYMCP_ variable of the shell removed: each test sets its own."""
    for name in list(os.environ):
        if name.startswith("WYMCP_"):
            monkeypatch.delenv(name)
