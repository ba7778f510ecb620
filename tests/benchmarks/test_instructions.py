"""benchmarks/instructions.py: the totals callgrind dumps become a count per call."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import instructions


def test_the_last_dump_of_the_server_is_read(tmp_path: Path) -> None:
    (tmp_path / "cg.41").write_text("events: Ir\nsummary: 1000\n", encoding="utf-8")
    latest = tmp_path / "cg.41.1"
    latest.write_text("events: Ir\ntotals: 5000\n", encoding="utf-8")
    older = latest.stat().st_mtime - 10
    os.utime(tmp_path / "cg.41", (older, older))
    (tmp_path / "cg.42.1").write_text("totals: 99\n", encoding="utf-8")
    assert instructions._total_instructions(tmp_path, 41) == 5000


def test_a_dump_without_totals_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "cg.7").write_text("events: Ir\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="no totals"):
        instructions._total_instructions(tmp_path, 7)
