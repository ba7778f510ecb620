"""A dead worker's metrics files, folded into one per kind (gunicorn `child_exit`).

prometheus_client's `mark_process_dead` removes a dead worker's live gauges
only; its counter and histogram files stayed, read by every scrape, one pair
per worker restart. `worker_exited` adds their values to `<kind>_archive.db`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from wymcp.transport.aiohttp._metrics import MULTIPROCESS_ENV

KINDS: Final = ("counter", "histogram")
"""The kinds whose values are sums over the workers, dead ones included."""
ARCHIVE: Final = "archive"
"""The file name's part where a worker's pid would be (`counter_archive.db`)."""


def worker_exited(pid: int, path: str | None = None) -> None:
    """Forget worker `pid`'s files in `PROMETHEUS_MULTIPROC_DIR` (or `path`).

    Its live gauges are removed (`mark_process_dead`); its counters and
    histograms are added to the archive file of their kind, then their files
    removed, so the sums a scrape reports stay the same and the files stay
    two per live worker plus two. Call it from gunicorn's `child_exit`.
    """
    from prometheus_client import multiprocess  # noqa: PLC0415 - the optional extra
    from prometheus_client.mmap_dict import MmapedDict  # noqa: PLC0415 - only when a worker exits

    directory = path or os.environ.get(MULTIPROCESS_ENV)
    if not directory:
        return
    multiprocess.mark_process_dead(pid, directory)  # type: ignore[no-untyped-call]
    for kind in KINDS:
        dead = Path(directory) / f"{kind}_{pid}.db"
        if not dead.exists():
            continue
        values = list(MmapedDict.read_all_values_from_file(str(dead)))  # type: ignore[no-untyped-call]
        archive = MmapedDict(str(Path(directory) / f"{kind}_{ARCHIVE}.db"))  # type: ignore[no-untyped-call]
        try:
            for key, value, timestamp, _ in values:
                kept, _ = archive.read_value(key)  # type: ignore[no-untyped-call]
                archive.write_value(key, kept + value, timestamp)  # type: ignore[no-untyped-call]
        finally:
            archive.close()  # type: ignore[no-untyped-call]
        dead.unlink()
