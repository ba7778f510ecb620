"""The one wymcp version: `VERSION` at the root, copied into every member's pyproject.

Every workspace member (packages/* and services/*) declares `version` and pins the
others (`wymcp-conf==V`) statically, so uv locks without building anything and
each sdist stands alone. This script keeps those copies equal to `VERSION`:
`check` lists every disagreement (exit 1), `set X` writes X everywhere.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSION_FILE = "VERSION"
_PROJECT_VERSION = re.compile(r'(?m)^version = "(?P<version>[^"]*)"$')
_NAME = r"wymcp[-_.][a-z0-9_.-]*[a-z0-9](?:\[[^\]]*\])?"
"""A wymcp distribution's name with its extras, as a requirement spells it."""
_PIN = re.compile(rf'(?i)"(?P<name>{_NAME})\s*==\s*[^";\s]+')
_REQUIREMENT = re.compile(rf"(?i)(?P<name>{_NAME})(?P<spec>[^;]*)")
_RELEASE = re.compile(r"\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?")


def source(root: Path = ROOT) -> str:
    """The version the release carries, read from `VERSION`."""
    return (root / VERSION_FILE).read_text(encoding="utf-8").strip()


def members(root: Path = ROOT) -> list[Path]:
    """Every member's pyproject.toml, in a stable order."""
    packages = root.glob("packages/*/pyproject.toml")
    return sorted([*packages, *root.glob("services/*/pyproject.toml")])


def problems(root: Path = ROOT) -> list[str]:
    """Each version or `wymcp-*==` pin in a member that is not `VERSION`'s."""
    want = source(root)
    found: list[str] = []
    for pyproject in members(root):
        where = pyproject.relative_to(root)
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        if project.get("version") != want:
            found.append(f"{where}: version {project.get('version')!r}, not {want!r}")
        requirements = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            requirements += extra
        for requirement in requirements:
            pin = _REQUIREMENT.match(requirement)
            if pin is not None and pin["spec"].replace(" ", "") != f"=={want}":
                found.append(f"{where}: {requirement!r} does not pin =={want}")
    return found


def write(version: str, root: Path = ROOT) -> list[Path]:
    """Write `version` into `VERSION` and every member; return the files changed."""
    if _RELEASE.fullmatch(version) is None:
        raise SystemExit(f"version: {version!r} is not like 1.2.3 or 1.2.3rc1")
    changed: list[Path] = []
    for pyproject in members(root):
        text = pyproject.read_text(encoding="utf-8")
        new = _PROJECT_VERSION.sub(f'version = "{version}"', text, count=1)
        new = _PIN.sub(lambda pin: f'"{pin["name"]}=={version}', new)
        if new != text:
            pyproject.write_text(new, encoding="utf-8")
            changed.append(pyproject)
    (root / VERSION_FILE).write_text(version + "\n", encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    """`check` (the default) or `set X`; print what is wrong or what changed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("check", help="list members that disagree with VERSION")
    setter = commands.add_parser("set", help="write a new version everywhere")
    setter.add_argument("version")
    args = parser.parse_args(argv)
    if args.command == "set":
        for path in write(args.version):
            print(f"version: {path.relative_to(ROOT)}")
        print(f"version: {args.version} written; refresh the lock with")
        print("version: `python3 scripts/bootstrap.py --lock`; add a CHANGELOG entry")
        return 0
    found = problems()
    for problem in found:
        print(f"version: {problem}", file=sys.stderr)
    if not found:
        print(f"version: every member is {source()}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
