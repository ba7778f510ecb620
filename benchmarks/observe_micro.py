"""In-process micro-benchmark: what the observation seam costs per ``tools/call``.

Run: ``.venv/bin/python benchmarks/observe_micro.py [N]``. The ``calc add`` call
of ``engine_micro.py`` goes through ``Engine.post`` at 2026-07-28 unobserved (the
default), with a ``CallRecord`` (what METRICS or ACCESS_LOG add in the engine),
and with one pass-through middleware; then the transport's part of METRICS alone
(a record made and ``Metrics.observe`` on it, the flush included). Best-of-5
process CPU, microseconds.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

from bench_wymcp_tools import Calc
from engine_micro import _Sink, modern_exchange
from wymcp.conf import load_settings
from wymcp.core.server import CallRecord, Engine, EngineOptions, Exchange, Next
from wymcp.transport.aiohttp._metrics import Metrics


async def _pass(call: CallRecord, call_next: Next) -> dict[str, Any]:
    del call
    return await call_next()


async def _cpu(engine: Engine, observed: bool, number: int) -> float:  # noqa: FBT001 - a plain switch
    sink = _Sink()
    template = modern_exchange()
    best = float("inf")
    for _ in range(5):
        exchanges = [
            Exchange(
                "POST",
                template.headers,
                template.body,
                record=CallRecord() if observed else None,
            )
            for _ in range(number)
        ]
        cpu = time.process_time()
        for exchange in exchanges:
            await engine.post(exchange, sink)
        best = min(best, time.process_time() - cpu)
    return best / number * 1e6


def _observe_cpu(number: int) -> float:
    metrics = Metrics(load_settings(None, METRICS=True))
    best = float("inf")
    for _ in range(5):
        cpu = time.process_time()
        for _ in range(number):
            record = CallRecord(
                method="tools/call",
                revision="2026-07-28",
                tool="calc",
                action="add",
                known_tool=True,
                known_action=True,
            )
            metrics.observe(record, 200, 0.001, 120)
        metrics.flush()  # the batched counts reach the series
        best = min(best, time.process_time() - cpu)
    return best / number * 1e6


async def main(number: int) -> None:
    plain = Engine(tools=[Calc])
    chained = Engine(tools=[Calc], options=EngineOptions(middleware=(_pass,)))
    rows = [
        ("unobserved (the default)", await _cpu(plain, False, number)),  # noqa: FBT003 - a plain switch
        ("with a CallRecord", await _cpu(plain, True, number)),  # noqa: FBT003 - a plain switch
        ("with one middleware", await _cpu(chained, False, number)),  # noqa: FBT003 - a plain switch
        ("record + Metrics.observe", _observe_cpu(number)),
    ]
    for label, cpu in rows:
        print(f"{label:28} {cpu:7.1f} us/call CPU")
    await plain.aclose()
    await chained.aclose()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000))
