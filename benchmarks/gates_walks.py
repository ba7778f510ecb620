"""CPU time of the gates' Python walks on 4 MiB bodies: decimal ``multipleOf`` and
the casts under ``patternProperties`` (docs/security.md, "Loop time").

Run: ``.venv/bin/python benchmarks/gates_walks.py``. For each body it prints the
thread CPU time (best of three) of ``check_fast`` (what core-server runs on the event
loop; ``None`` means the call goes to a worker thread) and of ``check`` (what the
worker thread runs).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, ClassVar

from wymcp.core.gates import Verdict, check, check_fast
from wymcp.core.schema import Action, Tool

BODY = 4 * 1024 * 1024


class Ledger(Tool):
    """Amounts in cents, counts in sevens, counters under a key pattern."""

    name = "ledger"
    description = "Sums amounts, counts and counters."
    actions: ClassVar[dict[str, Action]] = {
        "cents": Action(
            description="Sum amounts in cents",
            properties={
                "amounts": {
                    "type": "array",
                    "items": {"type": "number", "multipleOf": 0.01},
                }
            },
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
        "tags": Action(
            description="Keep counters",
            properties={
                "tags": {
                    "type": "object",
                    "patternProperties": {"^k[0-9]+$": {"type": "integer"}},
                    "additionalProperties": False,
                }
            },
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        """Never run here."""
        del action, data, ctx
        return None


def _array(item: str) -> list[Any]:
    count = (BODY - 400) // (len(item) + 1)
    return json.loads("[" + ",".join([item] * count) + "]")  # type: ignore[no-any-return]


def _cents() -> list[Any]:
    count = (BODY - 400) // 10
    text = ",".join(f"{i}.{i % 97 + 1:02d}" for i in range(count))
    return json.loads("[" + text + "]")  # type: ignore[no-any-return]


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


def main() -> None:
    """Print the figures."""
    cases: list[tuple[str, str, str, Any]] = [
        ("cents", "amounts", "4 MiB of 0", _array("0")),
        ("cents", "amounts", "4 MiB of 1.5", _array("1.5")),
        ("cents", "amounts", "4 MiB of distinct cents", _cents()),
        ("cents", "amounts", "4 MiB of 0.015", _array("0.015")),
        ("sevens", "counts", "4 MiB of 0", _array("0")),
        ("sevens", "counts", "4 MiB of 1", _array("1")),
        ("tags", "tags", "300,000 keys of 1", {f"k{i}": 1 for i in range(300_000)}),
        ("tags", "tags", "300,000 keys of 2.0", {f"k{i}": 2.0 for i in range(300_000)}),
    ]
    for action, field, label, value in cases:
        data = {field: value}
        fast, fast_verdict = _cpu(lambda: check_fast(Ledger, action, data))  # noqa: B023 - called at once, in this iteration
        full, verdict = _cpu(lambda: check(Ledger, action, data))  # noqa: B023 - called at once, in this iteration
        print(
            f"{action:7} {label:26} check_fast {fast * 1000:6.0f} ms "
            f"({_said(fast_verdict)})  check {full * 1000:6.0f} ms ({_said(verdict)})"
        )


if __name__ == "__main__":
    main()
