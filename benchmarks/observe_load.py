"""Server CPU per `tools/call` over HTTP with METRICS and TRACING off and on.

Run: ``.venv/bin/python benchmarks/observe_load.py [--requests N] [--reps R]``.
One `wymcp serve` per case, pinned to its own core as in `run.py` (its
`run_case`: warm-up, then N calls at concurrency 32 from the raw client). The
variants alternate, each repetition starting with the next one, so a noisy
spell of the shared machine hits them alike; each is compared with both off
of its own repetition. Tracing on: the OpenTelemetry SDK's `TracerProvider`
with a processor that drops each span (the server's own part of an exporter).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import bench_servers
from bench_servers import Placement, ServerKind
from run import run_case

_BASE = "from bench_wymcp_settings import *  # noqa: F403\n"
_TRACED = """
from opentelemetry import trace
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

_provider = TracerProvider()
_provider.add_span_processor(SpanProcessor())  # receives and drops each span
trace.set_tracer_provider(_provider)
TRACING = True
"""
VARIANTS = {
    "both off": _BASE,
    "metrics on": _BASE + "METRICS = True\n",
    "tracing on": _BASE + _TRACED,
    "both on": _BASE + "METRICS = True\n" + _TRACED,
}


@dataclass(frozen=True)
class _Variant(ServerKind):
    """wymcp served with one variant's settings module."""

    settings: str = "bench_wymcp_settings"

    def command(self, port: int, *, json_mode: bool) -> list[str]:
        del json_mode
        wymcp = Path(sys.executable).with_name("wymcp")
        return [
            str(wymcp),
            "serve",
            "--settings",
            self.settings,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=6000)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    args.client = "raw"
    server_cpus, _ = bench_servers.cpu_plan()
    placement = Placement(server_cpus)
    with tempfile.TemporaryDirectory() as folder:
        kinds = {}
        for number, (label, text) in enumerate(VARIANTS.items()):
            module = f"observe_variant_{number}"
            Path(folder, f"{module}.py").write_text(text, encoding="utf-8")
            kinds[label] = _Variant(f"wymcp-{number}", label, None, settings=module)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (folder, os.environ.get("PYTHONPATH", "")) if p
        )
        samples: dict[str, list[float]] = {label: [] for label in VARIANTS}
        order = list(kinds.items())
        for rep in range(args.reps):
            # each repetition starts with the next variant: a load that grows
            # or falls within a repetition does not favour one of them
            shift = rep % len(order)
            for label, kind in order[shift:] + order[:shift]:
                row = run_case(kind, "2026-07-28", "calc", args, placement)
                if "error" in row:
                    raise SystemExit(f"{label}: {row['error']}")
                samples[label].append(row["cpu_us"])
                print(
                    f"rep {rep + 1} {label:11} {row['cpu_us']:7.1f} us/call "
                    f"({row['rps']:.0f} calls/s)",
                    flush=True,
                )
    base = samples["both off"]
    print(f"\n{'variant':11} {'median':>7} {'min':>7} {'max':>7}  ratio to both off,")
    print(f"{'':35}median of the repetitions' (min-max)")
    for label, values in samples.items():
        ratios = [value / off for value, off in zip(values, base, strict=True)]
        print(
            f"{label:11} {statistics.median(values):7.1f} {min(values):7.1f} "
            f"{max(values):7.1f}  {statistics.median(ratios):.3f} "
            f"({min(ratios):.3f}-{max(ratios):.3f})"
        )


if __name__ == "__main__":
    main()
