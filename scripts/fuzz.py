"""A long, bounded fuzzing run of the endpoint and the gates (`just fuzz`).

Runs the Hypothesis tests of `tests/fuzz/` under the `wymcp-fuzz-long`
profile in rounds, each with a fresh seed, until `--minutes` have passed.
A failure stops the run, prints the failing example and the seed that
reproduces it, and exits 1; Hypothesis also stores the example in
`.hypothesis/`, so the short run of `just test` replays it until it is fixed
(turn it into an `@example` or a plain regression test). A round cut short by
the time limit is not a failure. `tests/fuzz/test_attack_shapes.py` holds the
attack shapes of issue 12 (deep-string bodies, capability bombs, compressed
bodies, near-miss URIs); `--only` it for a run of those alone. Every test
fails when the server's event loop was blocked over 500 ms.

    .venv/bin/python scripts/fuzz.py --minutes 10 [--examples 500] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTEST = ROOT / ".venv" / "bin" / "pytest"
MIN_ROUND_SECONDS = 5.0
"""A round is not started with less time than this left."""


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--minutes", type=float, default=10.0, help="how long to fuzz (default 10)"
    )
    parser.add_argument(
        "--examples",
        type=int,
        default=500,
        help="examples per test per round (default 500)",
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="the first round's seed (default random)"
    )
    parser.add_argument(
        "--only", default="tests/fuzz", help="the tests to run (default tests/fuzz)"
    )
    return parser.parse_args(argv)


def _round(seed: int, examples: int, only: str, seconds: float) -> int | None:
    """Run one round; its exit status, or None when the time ran out."""
    environment = {
        **os.environ,
        "WYMCP_FUZZ_PROFILE": "wymcp-fuzz-long",
        "WYMCP_FUZZ_EXAMPLES": str(examples),
    }
    command = [
        str(PYTEST),
        only,
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        f"--hypothesis-seed={seed}",
        "--hypothesis-show-statistics",
    ]
    try:
        completed = subprocess.run(
            command,
            cwd=ROOT,
            env=environment,
            timeout=seconds,
            capture_output=True,
            text=True,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    if completed.returncode != 0:
        print(completed.stdout[-20_000:])
        print(completed.stderr[-5_000:], file=sys.stderr)
    return completed.returncode


def main(argv: list[str] | None = None) -> int:
    """Fuzz in rounds until the time is up; 1 on the first failure."""
    args = _arguments(argv)
    deadline = time.monotonic() + args.minutes * 60
    seed = args.seed if args.seed is not None else random.randrange(2**32)  # noqa: S311 - a seed to replay, not a secret
    rounds = 0
    print(
        f"fuzz: {args.only}, {args.examples} examples per test per round, "
        f"{args.minutes:g} min, first seed {seed}",
        flush=True,
    )
    while (left := deadline - time.monotonic()) > MIN_ROUND_SECONDS:
        started = time.monotonic()
        status = _round(seed, args.examples, args.only, left)
        if status is None:
            print(f"fuzz: round {rounds + 1} (seed {seed}) cut short by the time limit")
            break
        if status != 0:
            print(
                f"fuzz: FAILED in round {rounds + 1}. Reproduce with:\n"
                f"  WYMCP_FUZZ_PROFILE=wymcp-fuzz-long WYMCP_FUZZ_EXAMPLES="
                f"{args.examples} .venv/bin/pytest {args.only} "
                f"--hypothesis-seed={seed}",
                flush=True,
            )
            return 1
        rounds += 1
        print(
            f"fuzz: round {rounds} (seed {seed}) passed in "
            f"{time.monotonic() - started:.0f} s",
            flush=True,
        )
        seed = (seed + 1) % 2**32
    print(f"fuzz: {rounds} complete round(s), no failure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
