"""Build a wheel and an sdist of every package into dist/ (stdlib and pip only).

Packages are found by globbing packages/*/pyproject.toml. Every `wymcp-*==V`
pin between them must name the version the pinned package declares, so
`pip install --find-links dist wymcp-transport-aiohttp` resolves. The build
backends the pyprojects name are installed once into a temporary folder
(nothing is added to the venv); wheels come from `pip wheel --no-deps` over it,
sdists from the backend's `build_sdist`.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_PIN = re.compile(
    r"^\s*(?P<name>wymcp[-_.][A-Za-z0-9_.-]+)\s*==\s*(?P<version>[^\s;,]+)"
)
_SEPARATORS = re.compile(r"[-_.]+")


def _normal(name: str) -> str:
    return _SEPARATORS.sub("-", name).lower()


def packages(root: Path = ROOT) -> dict[str, tuple[Path, dict[str, Any]]]:
    """Each package's normalised name -> (its folder, its parsed pyproject)."""
    found: dict[str, tuple[Path, dict[str, Any]]] = {}
    for pyproject in sorted(root.glob("packages/*/pyproject.toml")):
        config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        found[_normal(config["project"]["name"])] = (pyproject.parent, config)
    return found


def version_problems(found: dict[str, tuple[Path, dict[str, Any]]]) -> list[str]:
    """Every pin between the packages that names a version the other does not have."""
    versions = {
        name: str(config["project"]["version"]) for name, (_, config) in found.items()
    }
    problems: list[str] = []
    for name, (_, config) in found.items():
        project = config["project"]
        requirements = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            requirements += extra
        for requirement in requirements:
            pin = _PIN.match(requirement)
            if pin is None:
                continue
            pinned = _normal(pin["name"])
            if pinned not in versions:
                problems.append(f"{name} requires {pinned}, which is no package here")
            elif versions[pinned] != pin["version"]:
                problems.append(
                    f"{name} pins {pinned}=={pin['version']},"
                    f" but {pinned} is {versions[pinned]}"
                )
    return problems


def _backend_requires(found: dict[str, tuple[Path, dict[str, Any]]]) -> list[str]:
    requires: set[str] = set()
    for _, config in found.values():
        system = config.get("build-system", {})
        requires.update(system.get("requires", []))
    return sorted(requires)


def build(out: Path, python: str = sys.executable) -> list[Path]:
    """Build every package into `out` (old wymcp artifacts removed); the new files."""
    found = packages()
    problems = version_problems(found)
    if problems:
        raise SystemExit("dist: versions disagree:\n  " + "\n  ".join(problems))
    out.mkdir(parents=True, exist_ok=True)
    for old in [*out.glob("wymcp_*.whl"), *out.glob("wymcp_*.tar.gz")]:
        old.unlink()
    folders = [str(folder) for folder, _ in found.values()]
    pip = [python, "-m", "pip", "--disable-pip-version-check"]
    with tempfile.TemporaryDirectory(prefix="wymcp-dist-") as backend_dir:
        requires = _backend_requires(found)
        subprocess.run(
            [*pip, "install", "-q", "--target", backend_dir, *requires], check=True
        )
        # one build environment for every package instead of one each
        wheel = [*pip, "wheel", "-q", "--no-deps", "--no-build-isolation"]
        subprocess.run(
            [*wheel, "-w", str(out), *folders],
            check=True,
            env={**os.environ, "PYTHONPATH": backend_dir},
        )
        for folder, config in found.values():
            backend = config.get("build-system", {}).get(
                "build-backend", "setuptools.build_meta:__legacy__"
            )
            module, _, attribute = str(backend).partition(":")
            hook = (
                "import importlib, sys\n"
                f"sys.path.insert(0, {backend_dir!r})\n"
                f"backend = importlib.import_module({module!r})\n"
                + (f"backend = getattr(backend, {attribute!r})\n" if attribute else "")
                + f"backend.build_sdist({str(out)!r})\n"
            )
            subprocess.run([python, "-c", hook], check=True, cwd=folder)
    built = sorted([*out.glob("wymcp_*.whl"), *out.glob("wymcp_*.tar.gz")])
    expected = {
        _normal(f"{name}-{config['project']['version']}")
        for name, (_, config) in found.items()
    }
    for kind in (".whl", ".tar.gz"):
        made = {
            _normal("-".join(path.name.removesuffix(kind).split("-")[:2]))
            for path in built
            if path.name.endswith(kind)
        }
        if made != expected:
            raise SystemExit(f"dist: expected {sorted(expected)} as {kind}, got {made}")
    return built


def main(argv: list[str] | None = None) -> int:
    """Build dist/ (or --out DIR); print what was built; return an exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist")
    parser.add_argument("--python", default=sys.executable, help="the Python with pip")
    args = parser.parse_args(argv)
    for path in build(args.out.resolve(), args.python):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
