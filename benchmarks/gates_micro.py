"""In-process micro-benchmark of the dispatch gates (``wymcp.core.gates.check``).

Run: ``.venv/bin/python benchmarks/gates_micro.py``. Prints best-of-N figures for
the 50-item order of reference/peers.md accepted, and for 100,000 wrong-typed array
items refused (with the size of the refusal's request-dependent part), and the worst
combinator case: 300,000 bad items under ``anyOf``, timed and with the longest
event-loop stall when it is served as core-server serves it.

``--process-time`` times the in-process figures in CPU time of this process, which
a machine busy with other work disturbs far less than wall time; run it against an
older tree (``PYTHONPATH=<tree>/packages/core-gates/src:...``) to compare: without
``check_fast`` the combinator case is served on the loop.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time

import wymcp.core.gates
from wymcp.core.gates import check
from wymcp.core.schema import Action, Tool, prepare

ITEM = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "minLength": 1, "maxLength": 32},
        "qty": {"type": "integer", "minimum": 1, "maximum": 1000},
        "price": {"type": "number", "minimum": 0},
    },
    "required": ["sku", "qty", "price"],
}


class Orders(Tool):
    name = "orders"
    description = "Order totals."
    actions = {  # noqa: RUF012 - a declaration
        "total": Action(
            description="Total an order",
            properties={
                "customer": {"type": "string", "minLength": 1, "maxLength": 64},
                "items": {"type": "array", "maxItems": 100, "items": ITEM},
            },
            required=["customer", "items"],
        ),
        "sum": Action(
            description="Sum values",
            properties={"values": {"type": "array", "items": {"type": "number"}}},
            required=["values"],
        ),
        "maybe": Action(
            description="Sum values, or nothing",
            properties={
                "values": {
                    "anyOf": [
                        {"type": "array", "items": {"type": "number"}},
                        {"type": "null"},
                    ]
                }
            },
            required=["values"],
        ),
    }

    async def run_action(self, action, data, ctx):
        del action, data, ctx


CLOCK = time.process_time if "--process-time" in sys.argv else time.perf_counter


def best_of(function, *, repeat: int, number: int) -> tuple[float, float]:
    """Best and median seconds per call over ``repeat`` rounds of ``number`` calls."""
    rounds = []
    for _ in range(repeat):
        start = CLOCK()
        for _ in range(number):
            function()
        rounds.append((CLOCK() - start) / number)
    return min(rounds), statistics.median(rounds)


def request_dependent_size(refusal: dict) -> int:
    """Bytes of the refusal without the parts fixed by the schema."""
    part = {
        k: v for k, v in refusal.items() if k not in {"input_schema", "valid_actions"}
    }
    return len(json.dumps(part).encode())


def main() -> None:
    spec = prepare(Orders)
    order = json.loads(
        json.dumps(
            {
                "customer": "c-1",
                "items": [
                    {"sku": f"sku-{i}", "qty": i + 1, "price": 9.5 + i}
                    for i in range(50)
                ],
            }
        )
    )
    verdict = check(spec, "total", order)
    if not verdict.accepted:
        raise SystemExit(f"the order was refused: {verdict.refusal}")
    best, median = best_of(lambda: check(spec, "total", order), repeat=20, number=2000)
    print(
        f"accepted 50-item order: best {best * 1e6:.1f} us, "
        f"median {median * 1e6:.1f} us per check()"
    )

    root = spec.actions["total"].root.validator
    best, median = best_of(lambda: root.is_valid(order), repeat=20, number=2000)
    print(
        f"  (the engine alone, jsonschema-rs is_valid: best {best * 1e6:.1f} us, "
        f"median {median * 1e6:.1f} us)"
    )

    bad = json.loads(json.dumps({"values": ["x"] * 100_000}))
    verdict = check(spec, "sum", bad)
    if verdict.refusal is None or verdict.refusal["error_count"] != 100_000:
        raise SystemExit("the 100,000 wrong-typed items were not all counted")
    size = request_dependent_size(verdict.refusal)
    best, median = best_of(lambda: check(spec, "sum", bad), repeat=7, number=1)
    print(
        f"refused 100,000 wrong-typed items: best {best * 1e3:.1f} ms, median "
        f"{median * 1e3:.1f} ms; request-dependent part {size} bytes"
    )

    capped = json.loads(json.dumps({"customer": "c", "items": ["x"] * 100_000}))
    verdict = check(spec, "total", capped)
    if verdict.refusal is None:
        raise SystemExit("the 100,000 items were accepted")
    size = request_dependent_size(verdict.refusal)
    best, median = best_of(lambda: check(spec, "total", capped), repeat=7, number=1)
    print(
        f"refused 100,000 items under maxItems 100: best {best * 1e3:.1f} ms, median "
        f"{median * 1e3:.1f} ms; request-dependent part {size} bytes"
    )
    stray = json.loads(
        json.dumps(
            {
                "customer": "c",
                "items": [{"sku": "s", "qty": 1, "price": 1, "x": 1}] * 100_000,
            }
        )
    )
    verdict = check(spec, "total", stray)
    if verdict.refusal is None or verdict.refusal["unknown_count"] != 100_000:
        raise SystemExit("the 100,000 unknown keys were not all counted")
    size = request_dependent_size(verdict.refusal)
    best, median = best_of(lambda: check(spec, "total", stray), repeat=7, number=1)
    print(
        f"refused 100,000 unknown keys in array items: best {best * 1e3:.1f} ms, "
        f"median {median * 1e3:.1f} ms; request-dependent part {size} bytes"
    )
    combinator_case(spec)
    print(f"python {sys.version.split()[0]}")


COMBINED_ITEMS = 300_000


def combinator_case(spec: object) -> None:
    """300,000 bad items under anyOf: every one counted, and the loop kept free."""
    bad = json.loads(json.dumps({"values": ["x"] * COMBINED_ITEMS}))
    verdict = check(spec, "maybe", bad)
    if verdict.refusal is None:
        raise SystemExit("the 300,000 items under anyOf were accepted")
    counted = verdict.refusal["error_count"]
    size = request_dependent_size(verdict.refusal)
    best, median = best_of(lambda: check(spec, "maybe", bad), repeat=5, number=1)
    print(
        f"refused {COMBINED_ITEMS:,} bad items under anyOf (error_count "
        f"{counted:,}): best {best * 1e3:.1f} ms, median {median * 1e3:.1f} ms "
        f"per check(); request-dependent part {size} bytes"
    )
    took, stall = asyncio.run(_served(spec, bad))
    print(
        "  served as core-server does (check_fast on the loop, check in a thread"
        f"{'' if hasattr(wymcp.core.gates, 'check_fast') else ': absent, on the loop'}"
        "): "
        f"{took * 1e3:.1f} ms, longest event-loop stall {stall * 1e3:.1f} ms"
    )


async def _served(spec: object, data: dict) -> tuple[float, float]:
    """The call's time and the longest gap of a 1 ms ticker on the same loop."""
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    started = time.perf_counter()
    check_fast = getattr(wymcp.core.gates, "check_fast", None)
    verdict = None if check_fast is None else check_fast(spec, "maybe", data)
    if check_fast is None:
        verdict = check(spec, "maybe", data)
    elif verdict is None:
        verdict = await asyncio.to_thread(check, spec, "maybe", data)
    took = time.perf_counter() - started
    await asyncio.sleep(0.01)
    done.set()
    await task
    if verdict.accepted:
        raise SystemExit("the items under anyOf were accepted")
    return took, max(gaps)


if __name__ == "__main__":
    main()
