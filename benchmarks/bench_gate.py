"""The value gate in-process: `check()` on the 50-item order and on 100,000 bad items.

Prints one JSON object. Runs in the project's environment as a subprocess of run.py.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from bench_load import order_arguments
from bench_wymcp_tools import Calc, Orders
from wymcp.core.gates import check


def best_us(tool: Any, action: str, data: dict[str, Any], loops: int) -> float:
    """The best of five rounds of `loops` checks, in microseconds per check."""
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(loops):
            check(tool, action, data)
        best = min(best, (time.perf_counter() - started) / loops)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--loops", type=int, default=2000)
    parser.add_argument("--bad-items", type=int, default=100_000)
    args = parser.parse_args()
    order = order_arguments()
    verdict = check(Orders, "total", order)
    result: dict[str, Any] = {
        "order_accepted": verdict.accepted,
        "order_us": best_us(Orders, "total", order, args.loops),
        "calc_us": best_us(Calc, "add", {"a": 1, "b": 2}, args.loops),
    }
    bad = {"values": ["x"] * args.bad_items}
    started = time.perf_counter()
    verdict = check(Calc, "total", bad)
    result["bad_ms"] = (time.perf_counter() - started) * 1000
    result["bad_refused"] = not verdict.accepted
    refusal = json.dumps(verdict.refusal, separators=(",", ":"))
    result["bad_refusal_bytes"] = len(refusal.encode())
    result["bad_items"] = args.bad_items
    print(json.dumps(result))


if __name__ == "__main__":
    main()
