"""Clean environments for the install tests: what they hold and how to run in them.

`Env.needed` walks the installed distributions' own requirements, so a test can
say an environment holds nothing its packages do not ask for.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from types import ModuleType

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
RELEASE = (ROOT / "VERSION").read_text(encoding="utf-8").strip()


def load_script(name: str) -> ModuleType:
    """A script of scripts/ (no package) loaded by its path."""
    spec = importlib.util.spec_from_file_location(
        f"wymcp_{name}_script", ROOT / "scripts" / f"{name}.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_NOT_A_USERS = {"PYTHONPATH", "VIRTUAL_ENV", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"}


def user_env(**extra: str) -> dict[str, str]:
    """A user's shell: no venv active, no PYTHONPATH, no wymcp settings."""
    return {
        **{
            k: v
            for k, v in os.environ.items()
            if k
            not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"}
            and not k.startswith("WYMCP_")
        },
        "UV_PYTHON_DOWNLOADS": "never",
        **extra,
    }


class Env:
    """One clean virtual environment and what is installed in it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.python = root / "bin" / "python"

    def bin(self, name: str) -> Path:
        return self.root / "bin" / name

    def run(
        self, *args: str | Path, cwd: Path, stdin: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """Run a program of the env as a user would, in `cwd`; never raises."""
        return subprocess.run(  # noqa: S603 - the env's own programs
            [str(arg) for arg in args],
            input=stdin,
            capture_output=True,
            cwd=cwd,
            env=user_env(),
            timeout=120,
            check=False,
        )

    def distributions(self) -> dict[str, metadata.Distribution]:
        """Every installed distribution by canonical name (pip itself is none)."""
        [site] = self.root.glob("lib/python*/site-packages")
        return {
            canonicalize_name(found.metadata["Name"]): found
            for found in metadata.distributions(path=[str(site)])
        }

    def versions(self) -> dict[str, str]:
        return {name: found.version for name, found in self.distributions().items()}

    def needed(self, requirements: Iterable[str]) -> set[str]:
        """Every distribution the requirements pull in, walking each one's
        Requires-Dist with the extras asked of it (what an install must hold)."""
        found = self.distributions()
        walked: set[tuple[str, frozenset[str]]] = set()
        todo = [Requirement(text) for text in requirements]
        while todo:
            wanted = todo.pop()
            key = (canonicalize_name(wanted.name), frozenset(wanted.extras))
            if key in walked:
                continue
            walked.add(key)
            if key[0] not in found:
                continue  # reported by the caller's set comparison
            extras = {"", *wanted.extras}
            for text in found[key[0]].requires or []:
                requirement = Requirement(text)
                marker = requirement.marker
                if marker is None or any(marker.evaluate({"extra": e}) for e in extras):
                    todo.append(requirement)
        return {name for name, _ in walked}
