"""The wymcp import root stays a PEP 420 namespace shared by every distribution."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = sorted(
    p for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").is_file()
)
FORBIDDEN = (
    "wymcp/__init__.py",
    "wymcp/core/__init__.py",
    "wymcp/transport/__init__.py",
    "wymcp/broker/__init__.py",
)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_no_distribution_ships_a_namespace_init(package: Path) -> None:
    shipped = [f for f in FORBIDDEN if (package / "src" / f).exists()]
    assert shipped == [], f"{package.name} would shadow the other wymcp portions"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_folder_distribution_and_import_name_map_mechanically(package: Path) -> None:
    project = tomllib.loads((package / "pyproject.toml").read_text(encoding="utf-8"))
    dist = project["project"]["name"]
    assert dist == f"wymcp-{package.name}"
    import_name = dist.replace("-", ".")
    module = importlib.import_module(import_name)
    assert module.__file__ is not None
    assert Path(module.__file__).is_relative_to(package / "src")
    assert (Path(module.__file__).parent / "py.typed").is_file()


def test_every_member_version_moves_in_lockstep() -> None:
    versions = {
        tomllib.loads((p / "pyproject.toml").read_text(encoding="utf-8"))["project"][
            "version"
        ]
        for p in PACKAGES
    }
    assert len(versions) == 1
