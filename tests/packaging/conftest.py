"""The built dist/ of every package, and clean environments installed from it.

`dist` builds once per session with scripts/dist.py (which also runs twine
check). `install(...)` makes a new venv with the pinned uv and installs the
named packages from those wheels, every wymcp wheel and every third-party
distribution pinned by version and hash: the wheels' own hashes, and the set
uv.lock holds (`uv export`). The same install on any day, in about a second
once uv's cache holds the locked files (uv may ask the index whether its copy
of the index pages is fresh: the versions and hashes come from the lock).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.append(HERE)

from wheel_envs import (  # noqa: E402 - after the path entry
    RELEASE,
    ROOT,
    Env,
    load_script,
    user_env,
)

_EXPORT = ["--no-dev", "--no-emit-workspace", "--no-header", "--no-annotate", "-q"]
"""Third-party pins only: the wymcp packages come from dist/."""


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel and an sdist of every package, built and twine-checked."""
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(  # noqa: S603 - our own script, fixed arguments
        [sys.executable, str(ROOT / "scripts" / "dist.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return out


@pytest.fixture(scope="session")
def locked(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Constraints: each built wheel and every third-party pin of uv.lock, hashed."""
    uv = load_script("bootstrap").uv()
    exported = subprocess.run(  # noqa: S603 - the pinned uv, fixed arguments
        [uv, "export", "--frozen", "--all-packages", "--all-extras", *_EXPORT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    wheels = [
        f"{wheel.name.split('-')[0].replace('_', '-')}=={RELEASE}"
        f" --hash=sha256:{hashlib.sha256(wheel.read_bytes()).hexdigest()}"
        for wheel in sorted(dist.glob("*.whl"))
    ]
    path = tmp_path_factory.mktemp("locked") / "constraints.txt"
    path.write_text(exported + "\n".join(wheels) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def install(dist: Path, locked: Path, tmp_path: Path) -> Callable[..., Env]:
    """`install("wymcp-core-gates")`: a new venv holding it at RELEASE and its deps."""
    uv = load_script("bootstrap").uv()

    def make(*packages: str) -> Env:
        env = Env(tmp_path / "env")
        quiet = ["--no-config", "--quiet"]
        subprocess.run(  # noqa: S603 - the pinned uv, fixed arguments
            [uv, "venv", *quiet, str(env.root), "--python", sys.executable],
            cwd=tmp_path,
            env=user_env(),
            check=True,
        )
        subprocess.run(  # noqa: S603 - the pinned uv, fixed arguments
            [uv, "pip", "install", *quiet, "--python", str(env.python)]
            + ["--require-hashes", "--find-links", str(dist), "-c", str(locked)]
            + [f"{package}=={RELEASE}" for package in packages],
            cwd=tmp_path,
            env=user_env(),
            check=True,
        )
        return env

    return make
