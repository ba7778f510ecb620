"""How long `check` in a worker thread holds the event loop (docs/security.md).

Each 4 MiB body of ``gates_walks`` whose engine pass is long runs through `check`
in `OffLoopLane` while the loop beats every 5 ms: it prints the longest stall
(the most the thread held the interpreter at once), best of three, and the thread
CPU time. ``--whole`` asks the engine about the whole value in one call, as before
the split into runs of `SLICE` units.

    .venv/bin/python benchmarks/engine_runs.py [--whole]
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from gates_walks import Ledger, array, nested, wide_sevens
from wymcp.core.gates import _slices, check
from wymcp.core.server._off_loop import OffLoopLane

BEAT = 0.005


async def _held(work: Callable[[], Any]) -> tuple[float, float]:
    """(longest stall of the loop, thread CPU seconds) while `work` runs off it."""
    loop = asyncio.get_running_loop()
    longest = 0.0
    done = False

    async def beat() -> None:
        nonlocal longest
        while not done:
            due = loop.time() + BEAT
            await asyncio.sleep(BEAT)
            longest = max(longest, loop.time() - due)

    def timed() -> float:
        started = time.thread_time()
        work()
        return time.thread_time() - started

    beating = asyncio.ensure_future(beat())
    await asyncio.sleep(BEAT * 2)
    cpu = await OffLoopLane().run(timed)
    done = True
    await beating
    return longest, cpu


def cases() -> list[tuple[str, str, str, bytes]]:
    """(action, field, label, raw JSON of the field)."""
    tree = nested(90, lambda i: b"%d" % (7 * i))
    wide = wide_sevens(4299)
    return [
        ("tree", "tree", "4 MiB of 7N 90 deep, accepted", tree),
        ("tree", "tree", "4 MiB of 7N 90 deep, last leaf not", _off(tree)),
        ("sevens", "counts", "4 MiB of 4,299-digit 7N, accepted", wide),
        ("sevens", "counts", "4 MiB of 4,299-digit 7N, last not", _off(wide)),
        ("sevens", "counts", "4 MiB of 1, refused", array(b"1")),
        ("tags", "tags", "4 MiB of keys of 1.5, refused", _tags()),
    ]


def _off(raw: bytes) -> bytes:
    """`raw` with the last digit of its last number one more (mod 10)."""
    at = len(raw.rstrip(b"]")) - 1
    return raw[:at] + b"%d" % ((raw[at] - 48 + 1) % 10) + raw[at + 1 :]


def _tags() -> bytes:
    from gates_walks import tags_filled  # noqa: PLC0415 - one body, built here

    return tags_filled(b"1.5")


async def main() -> None:
    """Print the figures."""
    if "--whole" in sys.argv:
        _slices.SLICE = 1 << 62
    for action, field, label, raw in cases():
        data = {field: json.loads(raw)}
        figures = [
            await _held(lambda: check(Ledger, action, data))  # noqa: B023 - awaited in this iteration
            for _ in range(3)
        ]
        stall = min(f[0] for f in figures)
        cpu = min(f[1] for f in figures)
        print(
            f"{action:7} {label:38} longest stall {stall * 1000:5.0f} ms  "
            f"check {cpu * 1000:6.0f} ms CPU"
        )


if __name__ == "__main__":
    asyncio.run(main())
