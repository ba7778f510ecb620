"""Build a wheel and an sdist of every package into dist/, then `twine check --strict`.

Packages are found by globbing packages/*/pyproject.toml. The build refuses to
start while a member's version or `wymcp-*==` pin disagrees with `VERSION`
(scripts/version.py). Each package is built by the pinned uv (bootstrap's) with
the locked hatchling of the dev group (no build isolation, so nothing is fetched
and every run uses the same backend): the sdist first, then the wheel from the
sdist, which proves each sdist builds on its own.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _script(name: str) -> ModuleType:
    """Load a sibling script (scripts/ is no package) by its path."""
    spec = importlib.util.spec_from_file_location(
        f"wymcp_{name}", Path(__file__).with_name(f"{name}.py")
    )
    if spec is None or spec.loader is None:
        raise SystemExit(f"dist: cannot load scripts/{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def packages(root: Path = ROOT) -> dict[str, Path]:
    """Each package's distribution name -> its folder."""
    found: dict[str, Path] = {}
    for pyproject in sorted(root.glob("packages/*/pyproject.toml")):
        config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        found[config["project"]["name"]] = pyproject.parent
    return found


def build(out: Path, python: str = sys.executable, root: Path = ROOT) -> list[Path]:
    """Build and check every package of `root` into `out` (old wymcp files removed)."""
    problems = _script("version").problems(root)
    if problems:
        raise SystemExit("dist: versions disagree:\n  " + "\n  ".join(problems))
    version = _script("version").source(root)
    uv = _script("bootstrap").uv()
    out.mkdir(parents=True, exist_ok=True)
    for old in [*out.glob("wymcp_*.whl"), *out.glob("wymcp_*.tar.gz")]:
        old.unlink()
    found = packages(root)
    # the locked hatchling in `python`'s environment builds; nothing is fetched
    locked = ["--no-build-isolation", "--python", python, "--offline", "--quiet"]
    locked += ["--no-create-gitignore"]
    for folder in found.values():
        subprocess.run(
            [uv, "build", str(folder), "--out-dir", str(out), *locked], check=True
        )
    built = sorted([*out.glob("wymcp_*.whl"), *out.glob("wymcp_*.tar.gz")])
    stems = {name.replace("-", "_") + f"-{version}" for name in found}
    expected = {f"{stem}-py3-none-any.whl" for stem in stems}
    expected |= {f"{stem}.tar.gz" for stem in stems}
    if {path.name for path in built} != expected:
        raise SystemExit(f"dist: expected {sorted(expected)}, got {built}")
    subprocess.run(
        [python, "-m", "twine", "check", "--strict", *map(str, built)], check=True
    )
    return built


def main(argv: list[str] | None = None) -> int:
    """Build dist/ (or --out DIR); print what was built; return an exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist")
    parser.add_argument(
        "--python", default=sys.executable, help="the Python with hatchling and twine"
    )
    args = parser.parse_args(argv)
    for path in build(args.out.resolve(), args.python):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
