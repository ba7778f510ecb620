"""Set up the wymcp workspace from the locks, with nothing but python3 and pip.

Installs the pinned uv (`locks/uv.txt`, hash-checked) into `.cache/uv`, refuses
a `uv.lock` that is stale against any `pyproject.toml`, then makes `.venv`
exactly what `uv.lock` says: every member editable, the `dev` and `docs`
groups. Safe to run again. `--lock` refreshes every lock instead (what `just
lock` runs).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
TOOL = ROOT / ".cache" / "uv"
UV_LOCK = ROOT / "locks" / "uv.txt"
STALE = (
    "bootstrap: uv.lock is out of date with a pyproject.toml (a dependency or a"
    " version changed without a new lock).\n"
    "bootstrap: run `just lock` (or `python3 scripts/bootstrap.py --lock`),"
    " review the diff of uv.lock, and commit both."
)


def uv_env() -> dict[str, str]:
    """The environment every uv call runs in: this python, no downloads of one."""
    return {
        **os.environ,
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_PROJECT_ENVIRONMENT": str(VENV),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def uv() -> str:
    """The path of the pinned uv, installed from `locks/uv.txt` on first use."""
    binary = TOOL / "bin" / "uv"
    stamp = TOOL / "installed-from"
    want = UV_LOCK.read_text(encoding="utf-8")
    if binary.exists() and stamp.is_file() and stamp.read_text("utf-8") == want:
        return str(binary)
    print(f"bootstrap: installing the pinned uv into {TOOL.relative_to(ROOT)}")
    venv.EnvBuilder(with_pip=True, clear=True).create(TOOL)
    subprocess.run(
        [
            str(TOOL / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--require-hashes",
            "-r",
            str(UV_LOCK),
        ],
        check=True,
        env=uv_env(),
    )
    stamp.write_text(want, encoding="utf-8")
    return str(binary)


def run_uv(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the pinned uv in the workspace root with this interpreter."""
    return subprocess.run(
        [uv(), *args],
        check=check,
        env=uv_env(),
        cwd=ROOT,
        text=True,
        capture_output=not check,
    )


def sync() -> int:
    """Make `.venv` what `uv.lock` says; exit 1 with the fix when the lock is stale."""
    done = run_uv("lock", "--check", "--python", sys.executable, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        print(STALE, file=sys.stderr)
        return 1
    print("bootstrap: installing .venv from uv.lock (every member, dev and docs)")
    run_uv(
        "sync",
        "--locked",
        "--all-packages",
        "--group",
        "dev",
        "--group",
        "docs",
        "--python",
        sys.executable,
        "--quiet",
    )
    print("bootstrap: ready (.venv)")
    return 0


def lock() -> int:
    """Refresh every lock: uv.lock, the side environments' and Node's."""
    run_uv("lock", "--python", sys.executable)
    sides = ROOT / "scripts" / "side_envs.py"
    subprocess.run([sys.executable, str(sides), "lock"], check=True, env=uv_env())
    node = ROOT / "scripts" / "node_tools.py"
    subprocess.run([sys.executable, str(node), "lock"], check=True)
    print("bootstrap: locks refreshed; review `git diff locks uv.lock` and commit")
    return 0


def main() -> int:
    """Install from the locks (default) or refresh them (`--lock`)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock", action="store_true", help="refresh every lock")
    args = parser.parse_args()
    return lock() if args.lock else sync()


if __name__ == "__main__":
    sys.exit(main())
