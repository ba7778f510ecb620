"""Loop time of hoisting a help answer's shared subschemas (docs/security.md).

50, 100 and 200 actions of 30 string fields each, every field repeated across
actions: prints the answer's bytes before and after, and the best of three times.

    .venv/bin/python benchmarks/help_defs_micro.py
"""

from __future__ import annotations

import json
import time
from typing import Any

from wymcp.core.server._help_defs import hoist_shared


def answer(actions: int) -> dict[str, Any]:
    """A tool-level help answer of `actions` actions sharing their 30 fields."""
    fields = {
        f"f{j}": {"type": "string", "maxLength": j + 1, "description": "x" * 40}
        for j in range(30)
    }
    return {"actions": {f"a{i}": {"properties": dict(fields)} for i in range(actions)}}


def main() -> None:
    for actions in (50, 100, 200):
        payload = answer(actions)
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            hoisted = hoist_shared(payload)
            best = min(best, time.perf_counter() - start)
        before, after = len(json.dumps(payload)), len(json.dumps(hoisted))
        print(f"{actions} actions: {before:,} -> {after:,} bytes, {best * 1000:.0f} ms")


if __name__ == "__main__":
    main()
