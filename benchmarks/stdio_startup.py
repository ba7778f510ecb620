"""Time to first answer of `wymcp stdio` against `python -m wymcp.transport.stdio`.

Each launch starts a fresh server on pipes with the benchmark's settings,
sends one `tools/list` (2026-07-28) at once and times the first answer line
from the spawn. The launches alternate; the medians and their ratio are
printed. The figure in docs/stdio.md comes from
`python benchmarks/stdio_startup.py --runs 15`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
REQUEST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
SETTINGS = ["--settings", "bench_wymcp_settings"]
COMMANDS = {
    "wymcp stdio": [str(Path(sys.executable).with_name("wymcp")), "stdio", *SETTINGS],
    "python -m wymcp.transport.stdio": [
        sys.executable,
        "-m",
        "wymcp.transport.stdio",
        *SETTINGS,
    ],
}


def first_answer(command: list[str]) -> float:
    """Seconds from the spawn to the first answer line of one fresh server."""
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    started = time.perf_counter()
    child = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=HERE,
        env=env,
    )
    stdin, stdout = child.stdin, child.stdout
    if stdin is None or stdout is None:
        raise RuntimeError("no pipes")
    stdin.write(json.dumps(REQUEST).encode() + b"\n")
    stdin.flush()
    line = stdout.readline()
    elapsed = time.perf_counter() - started
    stdin.close()
    child.wait(timeout=30)
    answer = json.loads(line)
    if "result" not in answer:
        raise RuntimeError(f"{command[0]}: {line[:200]!r}")
    return elapsed


def main() -> int:
    """Launch each server `--runs` times, alternating; print medians and ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="launches of each")
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for command in COMMANDS.values():  # warm the file cache once each
        first_answer(command)
    for _ in range(args.runs):
        for name, command in COMMANDS.items():
            times[name].append(first_answer(command))
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, median in medians.items():
        spread = f"{min(times[name]):.3f}-{max(times[name]):.3f}"
        print(f"{name}: median {median:.3f} s ({spread} s, {args.runs} launches)")
    ratio = medians["wymcp stdio"] / medians["python -m wymcp.transport.stdio"]
    print(f"ratio: {ratio:.2f} (target: within 1.3)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
