"""The TypeScript SDK peers warm up until V8 has compiled their hot path.

With the 200 warm-up calls of the Python servers, most of V8's compiling fell
inside the measured calls, so each load client's CPU per call depended on how
many calls it measured (the two clients 26% apart on the TS SDK 2.x alone).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import run
from bench_servers import SERVERS


def test_a_full_run_warms_the_node_peers_for_thousands_of_calls() -> None:
    args = run.parse_args(["--skip-install"])
    assert args.warmup == 200
    for key in ("ts-sdk-1", "ts-sdk-2"):
        assert run.warmup_calls(SERVERS[key], args) == 5000
    for key in ("sdk", "fastmcp", "wymcp", "ceiling", "raw-uvloop"):
        assert run.warmup_calls(SERVERS[key], args) == 200


def test_the_longer_of_the_two_warm_ups_wins() -> None:
    args = run.parse_args(["--warmup", "8000", "--jit-warmup", "3000"])
    assert run.warmup_calls(SERVERS["ts-sdk-2"], args) == 8000
    assert run.warmup_calls(SERVERS["wymcp"], args) == 8000


def test_smoke_mode_stays_small() -> None:
    args = run.parse_args(["--smoke"])
    assert run.warmup_calls(SERVERS["ts-sdk-2"], args) == args.warmup
