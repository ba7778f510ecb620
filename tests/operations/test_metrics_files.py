"""`worker_exited`: a dead worker's metrics files are folded, the sums unchanged.

Under gunicorn each worker restart left a counter and a histogram file that
every scrape read (issue 27); they are now added to one archive per kind.
"""

from __future__ import annotations

from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.mmap_dict import MmapedDict, mmap_key
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from wymcp.transport.aiohttp import worker_exited


def _write(
    directory: Path, kind: str, pid: int, values: dict[tuple[str, str], float]
) -> None:
    """A worker's file as prometheus_client writes it: (sample, le) -> value."""
    written = MmapedDict(str(directory / f"{kind}_{pid}.db"))
    for (sample, le), value in values.items():
        metric = sample.rsplit("_", 1)[0]
        labels, label_values = (["le"], [le]) if le else ([], [])
        key = mmap_key(metric, sample, labels, label_values, f"{metric} help")
        written.write_value(key, value, 0.0)
    written.close()


def _worker(directory: Path, pid: int, calls: float) -> None:
    _write(directory, "counter", pid, {("calls_total", ""): calls})
    took = {
        ("took_bucket", "0.5"): calls / 2,
        ("took_bucket", "+Inf"): calls / 2,  # per bucket, not cumulative
        ("took_sum", ""): calls / 10,
    }
    _write(directory, "histogram", pid, took)
    _write(directory, "gauge_livesum", pid, {("open_sessions", ""): 1.0})


def _scraped(directory: Path) -> dict[str, float]:
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(directory))
    text = generate_latest(registry).decode()
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name != "took_bucket" or sample.labels.get("le") == "0.5"
    }


def test_dead_workers_are_folded_and_the_sums_stay(tmp_path: Path):
    for pid in range(100, 110):
        _worker(tmp_path, pid, calls=float(pid))
    before = _scraped(tmp_path)
    assert before["calls_total"] == sum(range(100, 110))
    for pid in range(100, 108):  # eight restarts
        worker_exited(pid, str(tmp_path))
    after = _scraped(tmp_path)
    files = sorted(path.name for path in tmp_path.iterdir())
    assert files == [
        "counter_108.db",
        "counter_109.db",
        "counter_archive.db",
        "gauge_livesum_108.db",
        "gauge_livesum_109.db",
        "histogram_108.db",
        "histogram_109.db",
        "histogram_archive.db",
    ]
    # the counters and histograms are unchanged; the dead workers' gauges left
    sessions = "open_sessions"
    assert {k: v for k, v in after.items() if k != sessions} == {
        k: v for k, v in before.items() if k != sessions
    }
    assert before["took_count"] == before["calls_total"]
    assert before["open_sessions"] == 10
    assert after["open_sessions"] == 2


def test_without_the_directory_nothing_happens(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    _worker(tmp_path, 7, calls=1.0)
    worker_exited(7)
    assert len(list(tmp_path.iterdir())) == 3
