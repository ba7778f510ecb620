"""One version: `VERSION`, copied into every member and every pin between them.

Each pyproject keeps its version and its `wymcp-*==` pins written out (static
metadata: uv locks without building, each sdist stands alone); scripts/version.py
writes them from `VERSION` and these tests fail the moment one disagrees.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from wheel_envs import RELEASE, ROOT, load_script

version = load_script("version")
dist = load_script("dist")

MEMBER = """\
[project]
name = "{name}"
version = "{version}"
dependencies = [
{pins}]

[project.optional-dependencies]
jwt = ["pyjwt[crypto]>=2.10"]
"""


def make_tree(root: Path, release: str, members: dict[str, tuple[str, list[str]]]):
    (root / "VERSION").write_text(release + "\n")
    for name, (declared, pins) in members.items():
        folder = root / "packages" / name.removeprefix("wymcp-")
        folder.mkdir(parents=True)
        lines = "".join(f'    "{pin}",\n' for pin in pins)
        text = MEMBER.format(name=name, version=declared, pins=lines)
        (folder / "pyproject.toml").write_text(text)


def test_every_member_and_pin_of_the_workspace_is_the_release():
    assert RELEASE == "0.2.0"
    assert version.problems(ROOT) == []
    members = version.members(ROOT)
    assert len(members) == 11  # nine packages, two services
    for pyproject in members:
        project = tomllib.loads(pyproject.read_text())["project"]
        assert project["version"] == RELEASE, pyproject


def test_a_member_or_a_pin_off_the_release_is_named(tmp_path):
    make_tree(
        tmp_path,
        "0.2.0",
        {
            "wymcp-a": ("0.1.0", ["attrs>=25"]),
            "wymcp-b": ("0.2.0", ["wymcp-a==0.1.0", "wymcp_c[x] >= 0.2.0"]),
            "wymcp-d": ("0.2.0", ["wymcp-a[jwt]==0.2.0", "wymcp-b == 0.2.0"]),
        },
    )
    assert version.problems(tmp_path) == [
        "packages/a/pyproject.toml: version '0.1.0', not '0.2.0'",
        "packages/b/pyproject.toml: 'wymcp-a==0.1.0' does not pin ==0.2.0",
        "packages/b/pyproject.toml: 'wymcp_c[x] >= 0.2.0' does not pin ==0.2.0",
    ]


def test_set_writes_the_release_into_every_member_and_pin(tmp_path):
    make_tree(
        tmp_path,
        "0.2.0",
        {
            "wymcp-a": ("0.2.0", ["attrs>=25"]),
            "wymcp-b": ("0.2.0", ["wymcp-a==0.2.0", "wymcp-a[jwt]==0.2.0"]),
        },
    )
    changed = version.write("0.3.0rc1", tmp_path)
    assert len(changed) == 2
    assert version.source(tmp_path) == "0.3.0rc1"
    assert version.problems(tmp_path) == []
    text = (tmp_path / "packages/b/pyproject.toml").read_text()
    assert '"wymcp-a==0.3.0rc1"' in text
    assert '"wymcp-a[jwt]==0.3.0rc1"' in text
    assert '"pyjwt[crypto]>=2.10"' in text  # other requirements untouched


def test_set_refuses_what_is_not_a_release(tmp_path):
    make_tree(tmp_path, "0.2.0", {"wymcp-a": ("0.2.0", [])})
    with pytest.raises(SystemExit, match="is not like"):
        version.write("0.3", tmp_path)
    assert version.source(tmp_path) == "0.2.0"


def test_dist_builds_nothing_while_a_version_disagrees(tmp_path):
    make_tree(tmp_path, "0.2.0", {"wymcp-a": ("0.1.0", [])})
    out = tmp_path / "dist"
    with pytest.raises(SystemExit, match="versions disagree"):
        dist.build(out, root=tmp_path)
    assert not out.exists()


def test_the_changelog_has_an_unreleased_section_then_the_release():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    heading = r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$"
    releases = re.findall(heading, text, re.MULTILINE)
    assert releases[0] == ("Unreleased", "")
    assert releases[1][0] == RELEASE
    assert releases[1][1], "the release's entry needs its date"
    assert [name for name, _ in releases].count(RELEASE) == 1
    entry = text.split(f"## [{RELEASE}]")[1].split("\n## [")[0]
    assert "### Changed" in entry
    assert "### Added" in entry
