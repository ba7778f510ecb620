"""CPU time of the gates' Python walks on 4 MiB bodies: decimal ``multipleOf`` and
the casts under ``patternProperties`` (docs/security.md, "Loop time").

Run: ``.venv/bin/python benchmarks/gates_walks.py``. For each body it prints the
thread CPU time (best of three) of ``check_fast`` (what core-server runs on the event
loop; ``None`` means the call goes to a worker thread) and of ``check`` (what the
worker thread runs). The tool and the bodies are the ones
``tests/hardening/test_gate_walks.py`` serves.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, ClassVar

from wymcp.core.gates import Verdict, check, check_fast
from wymcp.core.schema import Action, Tool

BODY = 4 * 1024 * 1024
"""The default BODY_LIMIT: the largest body a client may send."""
ROOM = 400
"""Bytes of a body left for the call around the data."""


def _cents() -> dict[str, Any]:
    return {"type": "number", "multipleOf": 0.01}


class Ledger(Tool):
    """Amounts in cents, counts in sevens, counters under a key pattern."""

    name = "ledger"
    description = "Sums amounts, counts and counters."
    actions: ClassVar[dict[str, Action]] = {
        "cents": Action(
            description="Sum amounts in cents",
            properties={"amounts": {"type": "array", "items": _cents()}},
        ),
        "sevens": Action(
            description="Count in sevens",
            properties={
                "counts": {
                    "type": "array",
                    "items": {"type": "integer", "multipleOf": 7},
                }
            },
        ),
        "batches": Action(
            description="Sum batches of amounts in cents",
            properties={
                "batches": {
                    "type": "array",
                    "items": {"type": "array", "items": _cents()},
                }
            },
        ),
        "wholes": Action(
            description="Count in whole numbers",
            properties={"wholes": {"type": "array", "items": {"type": "integer"}}},
        ),
        "tree": Action(
            description="Count in sevens, in lists of lists",
            properties={
                "tree": {
                    "type": "array",
                    "items": {
                        "anyOf": [
                            {"$ref": "#/properties/tree"},
                            {"type": "integer", "multipleOf": 7},
                        ]
                    },
                }
            },
        ),
        "rows": Action(
            description="Keep distinct rows",
            properties={
                "rows": {
                    "type": "array",
                    "items": {"type": "object"},
                    "uniqueItems": True,
                }
            },
        ),
        "tags": Action(
            description="Keep counters and series",
            properties={
                "tags": {
                    "type": "object",
                    "patternProperties": {
                        "^k[0-9]+$": {"type": "integer"},
                        "^j": {"type": "array", "items": {"type": "integer"}},
                    },
                    "additionalProperties": False,
                }
            },
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        """Say how many values arrived (and, for counters, how many floats)."""
        del ctx
        values = next(iter(data.values()))
        said = {"action": action, "count": len(values)}
        if isinstance(values, dict):
            said["floats"] = sum(map(_floats, values.values()))
        return said


def _floats(value: object) -> int:
    if isinstance(value, list):
        return sum(1 for item in value if isinstance(item, float))
    return int(isinstance(value, float))


# ----- the bodies (raw JSON of the one data field) -----


def array(item: bytes) -> bytes:
    """A JSON array of ``item`` repeated to fill a 4 MiB body."""
    count = (BODY - ROOM) // (len(item) + 1)
    return b"[" + b",".join([item] * count) + b"]"


def filled(make: Callable[[int], bytes], limit: int = BODY - ROOM) -> list[bytes]:
    """``make(0)``, ``make(1)``, ... while they fit in ``limit`` bytes with commas."""
    items: list[bytes] = []
    size = 2
    while True:
        item = make(len(items))
        size += len(item) + 1
        if size > limit:
            return items
        items.append(item)


def distinct(make: Callable[[int], bytes], limit: int = BODY - ROOM) -> bytes:
    """A JSON array of ``make(i)`` for i = 0, 1, ... filling ``limit`` bytes."""
    return b"[" + b",".join(filled(make, limit)) + b"]"


def distinct_cents() -> bytes:
    """Distinct amounts with two decimals (each decided on its own), about 4 MiB."""
    count = (BODY - ROOM) // 10
    return b"[" + b",".join(b"%d.%02d" % (i, i % 97 + 1) for i in range(count)) + b"]"


def distinct_e280() -> bytes:
    """Distinct whole floats ``1e280``, ``2e280``, ... (the engine's costliest)."""
    return distinct(lambda i: b"%de280" % (i + 1))


def distinct_e300() -> bytes:
    """Distinct whole floats ``1e300``, ``2e300``, ...: each cast to its own int."""
    return distinct(lambda i: b"%de300" % (i + 1))


def distinct_refused_batches() -> bytes:
    """Batches ``[0.001]``, ``[1.011]``, ...: each refused on its own, about 4 MiB."""
    return distinct(lambda i: b"[%d.%02d1]" % (i, i % 100))


def nested(depth: int, make: Callable[[int], bytes], limit: int = BODY - ROOM) -> bytes:
    """A JSON array of ``make(i)`` each inside ``depth - 1`` arrays, ``limit`` bytes."""
    return distinct(lambda i: b"[" * (depth - 1) + make(i) + b"]" * (depth - 1), limit)


def wide_sevens(digits: int, limit: int = BODY - ROOM) -> bytes:
    """Distinct multiples of 7 of about ``digits`` digits, filling ``limit`` bytes."""
    return distinct(lambda i: b"%d" % (7 * (10 ** (digits - 2) + i)), limit)


def tags(value: bytes, count: int = 300_000, prefix: bytes = b"k") -> bytes:
    """An object of ``count`` keys ``k0``, ``k1``, ... (or ``prefix``) of one value."""
    pairs = (b'"%s%d":%s' % (prefix, i, value) for i in range(count))
    return b"{" + b",".join(pairs) + b"}"


def tags_filled(value: bytes, prefix: bytes = b"k") -> bytes:
    """``tags`` with as many keys as fill a 4 MiB body."""
    pairs = filled(lambda i: b'"%s%d":%s' % (prefix, i, value))
    return b"{" + b",".join(pairs) + b"}"


# ----- the figures -----


def _cpu(run: Callable[[], Verdict | None]) -> tuple[float, Verdict | None]:
    best, verdict = float("inf"), None
    for _ in range(3):
        started = time.thread_time()
        verdict = run()
        best = min(best, time.thread_time() - started)
    return best, verdict


def _said(verdict: Verdict | None) -> str:
    if verdict is None:
        return "None"
    return "accepted" if verdict.accepted else "refused"


def cases() -> list[tuple[str, str, str, bytes]]:
    """(action, field, label, raw JSON of the field) of every figure."""
    return [
        ("cents", "amounts", "4 MiB of 0", array(b"0")),
        ("cents", "amounts", "4 MiB of 1.5", array(b"1.5")),
        ("cents", "amounts", "4 MiB of distinct cents", distinct_cents()),
        ("cents", "amounts", "4 MiB of 0.015", array(b"0.015")),
        ("cents", "amounts", "4 MiB of 1e280", array(b"1e280")),
        ("cents", "amounts", "4 MiB of distinct Ne280", distinct_e280()),
        ("sevens", "counts", "4 MiB of 0", array(b"0")),
        ("sevens", "counts", "4 MiB of 1", array(b"1")),
        ("sevens", "counts", "4 MiB of 7e280", array(b"7e280")),
        ("batches", "batches", "4 MiB of [0.015]", array(b"[0.015]")),
        ("batches", "batches", "4 MiB of distinct [N.xx1]", distinct_refused_batches()),
        ("sevens", "counts", "4 MiB of 4,299-digit 7N", wide_sevens(4299)),
        ("wholes", "wholes", "4 MiB of distinct Ne300", distinct_e300()),
        ("tree", "tree", "4 MiB of 7N 90 deep", nested(90, lambda i: b"%d" % (7 * i))),
        (
            "rows",
            "rows",
            '4 MiB of distinct {"a":N}',
            distinct(lambda i: b'{"a":%d}' % i),
        ),
        ("tags", "tags", "300,000 keys of 1", tags(b"1")),
        ("tags", "tags", "300,000 keys of 2.0", tags(b"2.0")),
        ("tags", "tags", "4 MiB of keys of 1.5", tags_filled(b"1.5")),
        (
            "tags",
            "tags",
            "4 MiB of keys of [2.0,3.0,4.0]",
            tags_filled(b"[2.0,3.0,4.0]", b"j"),
        ),
    ]


def main() -> None:
    """Print the figures."""
    for action, field, label, raw in cases():
        data = {field: json.loads(raw)}
        typo = {"typo": 1, **data}
        fast, fast_verdict = _cpu(lambda: check_fast(Ledger, action, data))  # noqa: B023 - called at once, in this iteration
        full, verdict = _cpu(lambda: check(Ledger, action, data))  # noqa: B023 - called at once, in this iteration
        stray, _ = _cpu(lambda: check_fast(Ledger, action, typo))  # noqa: B023 - called at once, in this iteration
        print(
            f"{action:7} {label:32} check_fast {fast * 1000:5.0f} ms "
            f"({_said(fast_verdict)})  check {full * 1000:5.0f} ms ({_said(verdict)})"
            f"  check_fast with a typo key {stray * 1000:4.0f} ms"
        )


if __name__ == "__main__":
    main()
