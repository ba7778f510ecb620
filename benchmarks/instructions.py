"""Instructions per `tools/call` under the benchmark's load, counted by callgrind.

Run: ``.venv/bin/python benchmarks/instructions.py [--servers ...] [--tool order]``
(needs valgrind). Time on a shared machine moves by a quarter between runs;
the count of instructions a server executes per call does not, so a change's
cost shows here in one run. The servers run under callgrind (about 50 times
slower); the load client drives them at concurrency 32 as `run.py` does, and
only the measured calls are counted (calc, or the 50-item order, at 2026-07-28).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_load
from bench_servers import SERVERS, Placement, Running
from run import TOOLS, calls_for


def _total_instructions(dump_dir: Path, pid: int) -> int:
    """The instructions of the dump `callgrind_control -d` wrote last."""
    dumps = sorted(dump_dir.glob(f"cg.{pid}*"), key=lambda p: p.stat().st_mtime)
    for path in reversed(dumps):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError("callgrind wrote no totals")


def measure(key: str, tool: str, requests: int, warmup: int) -> float:
    """Instructions per measured call of `tool` on one server (a fresh process)."""
    with tempfile.TemporaryDirectory() as scratch:
        dump_dir = Path(scratch)
        callgrind = (
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={dump_dir}/cg.%p",
        )
        with Running(
            SERVERS[key], json_mode=True, placement=Placement(), wrapper=callgrind
        ) as server:
            server.wait_listening(timeout=300)
            pid = str(server.process.pid)
            marks: list[str] = []

            def checkpoint() -> None:
                flag = "-z" if not marks else "-d"  # zero, then dump
                subprocess.run(
                    ["callgrind_control", flag, pid], check=True, capture_output=True
                )
                marks.append(flag)

            outcome = asyncio.run(
                bench_load.drive(
                    server.url,
                    calls_for(key)[tool],
                    modern=True,
                    concurrency=32,
                    warmup=warmup,
                    requests=requests,
                    checkpoint=checkpoint,
                    client="raw",
                )
            )
            if outcome.failed or outcome.ok != requests:
                raise RuntimeError(f"{outcome.failed} calls failed")
            return _total_instructions(dump_dir, server.process.pid) / requests


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", default="wymcp,ceiling")
    parser.add_argument("--tool", choices=TOOLS, default="calc")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("valgrind is not installed (apt install valgrind)", file=sys.stderr)
        return 2
    keys = [k for k in args.servers.split(",") if k]
    counts = {key: measure(key, args.tool, args.requests, args.warmup) for key in keys}
    print(f"server   instructions per call ({args.tool}, 2026-07-28, concurrency 32)")
    for key, count in counts.items():
        line = f"{key:8} {count / 1000:9.1f} k"
        if "ceiling" in counts and key != "ceiling":
            line += f"   {count / counts['ceiling']:.2f}x the ceiling"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
