"""`wymcp dev`: serve in a subprocess and restart it when a project `.py` file changes.

The project is the current directory: its `.py` files are polled by
modification time (no watcher dependency), skipping hidden folders, virtual
environments, `__pycache__`, `node_modules` and `site-packages`.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any, Final, TextIO

from wymcp.cli._settings_option import add_settings_option

POLL_SECONDS: Final = 0.5
STOP_SECONDS: Final = 10.0
MAX_FILES: Final = 20_000
_SKIPPED: Final = frozenset({"__pycache__", "node_modules", "site-packages"})

Snapshot = dict[str, int]


def add_parser(commands: Any) -> None:
    """Add `wymcp dev` to the command's subparsers."""
    dev = commands.add_parser(
        "dev", help="serve over HTTP and restart when a .py file of the project changes"
    )
    add_settings_option(dev)
    dev.add_argument("--host", help="address to listen on (default: HOST)")
    dev.add_argument("--port", type=int, help="port to listen on (default: PORT)")


def _python_files(root: Path) -> Iterator[Path]:
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(
            name
            for name in subfolders
            if not name.startswith(".")
            and name not in _SKIPPED
            and not (Path(folder, name) / "pyvenv.cfg").exists()
        )
        for name in sorted(files):
            if name.endswith(".py"):
                yield Path(folder, name)


def snapshot(root: Path, limit: int = MAX_FILES) -> Snapshot:
    """The modification time of each project `.py` file under `root`, up to `limit`."""
    found: Snapshot = {}
    for path in _python_files(root):
        if len(found) >= limit:
            break
        try:
            found[str(path)] = path.stat().st_mtime_ns
        except OSError:  # removed between the listing and the stat: not there
            continue
    return found


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    """The files added, removed or modified between two snapshots, sorted."""
    keys = before.keys() | after.keys()
    return sorted(key for key in keys if before.get(key) != after.get(key))


def _serve_command(args: argparse.Namespace) -> list[str]:
    command = [sys.executable, "-m", "wymcp.cli", "serve"]
    if args.settings is not None:
        command += ["--settings", args.settings]
    if args.host is not None:
        command += ["--host", args.host]
    if args.port is not None:
        command += ["--port", str(args.port)]
    return command


def _stop(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server, and SIGKILL it if it has not stopped in STOP_SECONDS."""
    if child.poll() is not None:
        return
    child.send_signal(signal.SIGTERM)
    try:
        child.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def dev(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Serve until SIGINT or SIGTERM, restarting the server on each code change."""
    del out  # the server prints its banner itself
    root = Path.cwd()
    stopping: list[int] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        del frame
        stopping.append(signum)

    previous = signal.signal(signal.SIGTERM, stop)
    command = _serve_command(args)
    seen = snapshot(root)
    if len(seen) >= MAX_FILES:
        print(
            f"wymcp dev: watching only the first {MAX_FILES} .py files under {root};"
            " start it in the project folder.",
            file=err,
        )
    print(f"wymcp dev: watching {len(seen)} .py file(s) under {root}", file=err)
    child = subprocess.Popen(command)  # noqa: S603 - our own interpreter and module
    reported = False
    try:
        while not stopping:
            time.sleep(POLL_SECONDS)
            now = snapshot(root)
            difference = changed(seen, now)
            if difference:
                name = os.path.relpath(difference[0], root)
                more = f" and {len(difference) - 1} more" if len(difference) > 1 else ""
                print(f"wymcp dev: {name}{more} changed; restarting", file=err)
                _stop(child)
                child = subprocess.Popen(command)  # noqa: S603 - as above
                seen, reported = now, False
            elif child.poll() is not None and not reported:
                print(
                    f"wymcp dev: the server stopped (status {child.returncode});"
                    " waiting for a change to start it again",
                    file=err,
                )
                reported = True
    except KeyboardInterrupt:
        pass
    finally:
        _stop(child)
        signal.signal(signal.SIGTERM, previous)
    return 0
