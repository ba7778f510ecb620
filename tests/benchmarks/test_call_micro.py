"""The per-call micro-benchmark runs its four calls, all succeed (no speed check)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_benchmark_measures_both_eras_and_both_tools() -> None:
    done = subprocess.run(  # noqa: S603 - this interpreter, a file of the repository
        [
            sys.executable,
            str(ROOT / "benchmarks" / "call_micro.py"),
            "--rounds",
            "1",
            "--number",
            "3",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    cases = [line.split()[0] for line in done.stdout.splitlines()[1:5]]
    assert cases == [
        "2026-07-28/calc",
        "2025-11-25/calc",
        "2026-07-28/order",
        "2025-11-25/order",
    ]
