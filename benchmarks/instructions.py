"""Instructions per `tools/call` under the benchmark's load, counted by callgrind.

Run: ``.venv/bin/python benchmarks/instructions.py [--servers ...] [--tool order]``
(needs valgrind). Time on a shared machine moves by a quarter between runs;
the count of instructions a server executes per call does not, so a change's
cost shows here in one run. The servers run under callgrind (about 50 times
slower); the load client drives them at concurrency 32 as `run.py` does, and
only the measured calls are counted (calc, or the 50-item order, at 2026-07-28).

`--stages` splits the count by stage (HTTP parse, admission, JSON decode,
classify, gates, tool, encode, and the rest: write, the event loop and
aiohttp's dispatch): each stage's real function runs alone in-process under
callgrind (`stages.py`), and the rest is the load total less the stages.
`--json` prints the figures as one JSON object (run.py's "instructions").
`--metrics` serves wymcp with `METRICS` on (`WYMCP_METRICS=true`): run it
with and without to count what the metrics add per call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_load
from bench_limits import stage_table
from bench_servers import HERE, SERVERS, Placement, Running, project_env
from run import TOOLS, calls_for


def _total_instructions(dump_dir: Path, pid: int) -> int:
    """The instructions of the dump `callgrind_control -d` wrote last."""
    dumps = sorted(dump_dir.glob(f"cg.{pid}*"), key=lambda p: p.stat().st_mtime)
    for path in reversed(dumps):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError("callgrind wrote no totals")


def measure(
    key: str,
    tool: str,
    requests: int,
    warmup: int,
    extra_env: dict[str, str] | None = None,
) -> float:
    """Instructions per measured call of `tool` on one server (a fresh process)."""
    with tempfile.TemporaryDirectory() as scratch:
        dump_dir = Path(scratch)
        callgrind = (
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={dump_dir}/cg.%p",
        )
        with Running(
            SERVERS[key],
            json_mode=True,
            placement=Placement(),
            wrapper=callgrind,
            extra_env=extra_env,
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


def _dump_totals(dump_dir: Path) -> list[int]:
    """The totals of each numbered dump (`cg.out.1`, `.2`, ...), in order."""
    totals = []
    index = 1
    while (path := dump_dir / f"cg.out.{index}").exists():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("totals:"):
                totals.append(int(line.split()[1]))
                break
        else:
            totals.append(0)
        index += 1
    return totals


def stage_counts(key: str, tool: str, number: int) -> dict[str, float]:
    """Instructions per call of each stage of `key` ("wymcp" or "ceiling") alone."""
    with tempfile.TemporaryDirectory() as scratch:
        dump_dir = Path(scratch)
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={dump_dir}/cg.out",
            "--collect-atstart=no",
            "--toggle-collect=_operator_call",
            "--dump-after=_operator_call",
            sys.executable,
            str(HERE / "stages.py"),
            "--server",
            key,
            "--tool",
            tool,
            "--number",
            str(number),
        ]
        env = project_env() | {"PYTHONHASHSEED": "0"}
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"stages.py failed: {done.stderr[-1500:]}")
        names = json.loads(done.stdout.strip().splitlines()[-1])["dumps"]
        totals = _dump_totals(dump_dir)
    if len(totals) != len(names):
        raise RuntimeError(f"{len(totals)} dumps for {len(names)} stages")
    count = dict(zip(names, totals, strict=True))
    per = {
        name: (total - count["@empty"]) / number
        for name, total in count.items()
        if not name.startswith("@")
    }
    if "@engine" in count:
        engine = (count["@engine"] - count["@engine-empty"]) / number
        per["tool"] = engine - per["classify"] - per["gates"]
    return per


def split(key: str, tool: str, total: float, number: int) -> dict[str, float]:
    """Each stage's instructions per call, and the rest of the load total."""
    server = "ceiling" if key.startswith("ceiling") else "wymcp"
    per = stage_counts(server, tool, number)
    per["rest"] = total - sum(per.values())
    per["total"] = total
    return per


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", default="wymcp,ceiling")
    parser.add_argument("--tool", choices=TOOLS, default="calc")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--stages", action="store_true", help="split by stage")
    parser.add_argument("--number", type=int, default=2000, help="loops per stage")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--metrics", action="store_true", help="wymcp with METRICS on")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("valgrind is not installed (apt install valgrind)", file=sys.stderr)
        return 2
    keys = [k for k in args.servers.split(",") if k]
    extra_env = {"WYMCP_METRICS": "true"} if args.metrics else None
    counts = {
        key: measure(key, args.tool, args.requests, args.warmup, extra_env)
        for key in keys
    }
    stages = {}
    if args.stages:
        stages = {
            key: split(key, args.tool, counts[key], args.number)
            for key in keys
            if key in {"wymcp", "ceiling"}
        }
    if args.json:
        figures = {
            "tool": args.tool,
            "requests": args.requests,
            "metrics": args.metrics,
            "totals": counts,
        }
        print(json.dumps(figures | {"stages": stages, "number": args.number}))
        return 0
    metrics = ", METRICS on" if args.metrics else ""
    print(
        f"server   instructions per call ({args.tool}, 2026-07-28, "
        f"concurrency 32{metrics})"
    )
    for key, count in counts.items():
        line = f"{key:14} {count / 1000:9.1f} k"
        same_loop = "ceiling-uvloop" if key.endswith("uvloop") else "ceiling"
        if same_loop in counts and key != same_loop:
            line += f"   {count / counts[same_loop]:.2f}x {same_loop}"
        print(line)
    if stages:
        print()
        print(stage_table(stages, args.tool))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
