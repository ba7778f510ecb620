"""Set up the wymcp workspace from nothing but python3 and pip.

Creates `.venv`, upgrades pip (25.1+ knows `--group`), and installs every
workspace member editable plus the `dev` dependency group of the root
`pyproject.toml`. Standard library only; safe to run again.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"


def members() -> list[Path]:
    """Return the workspace member folders named in the root pyproject."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["uv"]["workspace"]["members"]
    found: list[Path] = []
    for pattern in patterns:
        found.extend(
            p for p in sorted(ROOT.glob(pattern)) if (p / "pyproject.toml").is_file()
        )
    return found


def main() -> int:
    """Create or refresh the virtual environment; return an exit code."""
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"bootstrap: creating {VENV}")
        venv.EnvBuilder(with_pip=True).create(VENV)
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    quiet = [] if os.environ.get("WYMCP_BOOTSTRAP_VERBOSE") else ["-q"]
    subprocess.run(
        [str(python), "-m", "pip", "install", *quiet, "--upgrade", "pip>=25.1"],
        check=True,
        env=env,
    )
    editable: list[str] = []
    for member in members():
        editable += ["-e", str(member)]
    print(f"bootstrap: installing {len(editable) // 2} members and the dev group")
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            *quiet,
            "--group",
            f"{ROOT / 'pyproject.toml'}:dev",
            *editable,
        ],
        check=True,
        env=env,
        cwd=ROOT,
    )
    print("bootstrap: ready (.venv)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
