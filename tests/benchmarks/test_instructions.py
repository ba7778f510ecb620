"""benchmarks/instructions.py: the totals callgrind dumps become a count per call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_servers
import instructions

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def test_the_last_dump_of_the_server_is_read(tmp_path: Path) -> None:
    (tmp_path / "cg.41").write_text("events: Ir\nsummary: 1000\n", encoding="utf-8")
    latest = tmp_path / "cg.41.1"
    latest.write_text("events: Ir\ntotals: 5000\n", encoding="utf-8")
    older = latest.stat().st_mtime - 10
    os.utime(tmp_path / "cg.41", (older, older))
    (tmp_path / "cg.42.1").write_text("totals: 99\n", encoding="utf-8")
    assert instructions._total_instructions(tmp_path, 41) == 5000


def test_a_dump_without_totals_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "cg.7").write_text("events: Ir\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="no totals"):
        instructions._total_instructions(tmp_path, 7)


def test_numbered_dumps_are_read_in_order(tmp_path: Path) -> None:
    (tmp_path / "cg.out").write_text("totals: 0\n", encoding="utf-8")
    for index, total in ((1, 500), (2, 70), (3, 9000)):
        path = tmp_path / f"cg.out.{index}"
        path.write_text(f"events: Ir\ntotals: {total}\n", encoding="utf-8")
    assert instructions._dump_totals(tmp_path) == [500, 70, 9000]


def test_the_rest_is_the_load_total_less_the_stages(monkeypatch) -> None:
    stages = {"parse": 50_000.0, "decode": 30_000.0, "tool": 20_000.0}
    monkeypatch.setattr(instructions, "stage_counts", lambda *_: dict(stages))
    split = instructions.split("wymcp", "calc", 400_000.0, 10)
    assert split["rest"] == 300_000.0
    assert split["total"] == 400_000.0


@pytest.mark.parametrize("server", ["wymcp", "ceiling"])
def test_every_stage_runs_on_the_request_the_load_client_sends(server: str) -> None:
    """stages.py without callgrind: each stage's real function runs (wymcp's
    engine answers the call with 200, else it raises)."""
    done = subprocess.run(  # noqa: S603 - our own script, fixed arguments
        [sys.executable, str(BENCH / "stages.py"), "--server", server, "--number", "3"],
        capture_output=True,
        text=True,
        env=bench_servers.project_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dumps = json.loads(done.stdout.strip().splitlines()[-1])["dumps"]
    expected = ["parse", "decode", "classify", "encode", "@empty"]
    if server == "wymcp":
        expected = ["parse", "admission", "decode", "classify", "gates", "encode"]
        expected += ["@engine", "@engine-empty", "@empty"]
    assert dumps == expected


@pytest.mark.parametrize(("flag", "env"), [([], None), (["--metrics"], "true")])
def test_metrics_on_serves_wymcp_with_metrics(
    monkeypatch, capsys, flag: list[str], env: str | None
) -> None:
    """`--metrics` starts each server with WYMCP_METRICS=true (and says so)."""
    seen: list[dict[str, str] | None] = []

    def measure(*args: object) -> float:
        seen.append(args[4])  # type: ignore[arg-type]
        return 1000.0

    monkeypatch.setattr(instructions, "measure", measure)
    monkeypatch.setattr(instructions.shutil, "which", lambda _: "/usr/bin/valgrind")
    assert instructions.main(["--servers", "wymcp", "--json", *flag]) == 0
    assert seen == [None if env is None else {"WYMCP_METRICS": env}]
    assert json.loads(capsys.readouterr().out)["metrics"] is bool(flag)


def test_observe_calls_counts_what_metrics_add() -> None:
    """benchmarks/observe_calls.py: METRICS on runs Metrics.observe once per call."""
    done = subprocess.run(  # noqa: S603 - our own script, fixed arguments
        [sys.executable, str(BENCH / "observe_calls.py"), "20"],
        capture_output=True,
        text=True,
        env=bench_servers.project_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("function calls per tools/call: METRICS off")
    assert any(
        line.split() == ["+1.00", "_metrics.py:Metrics.observe"] for line in lines
    ), done.stdout
