"""`just dist`: a wheel and an sdist of every package at the one release, complete.

What a package index shows and a user's installer reads comes from the wheel's
METADATA: its version and its pins to the other packages must be the release
in `VERSION`, and the description, license, classifiers and typing marker must
be there. The sdists must stand alone (dist.py builds each wheel from its sdist).
"""

from __future__ import annotations

import tarfile
import tomllib
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement
from wheel_envs import RELEASE, ROOT, load_script

PACKAGES = load_script("dist").packages()


def wheel_of(dist: Path, name: str) -> Path:
    return dist / f"{name.replace('-', '_')}-{RELEASE}-py3-none-any.whl"


def metadata_of(wheel: Path) -> tuple[Message, set[str]]:
    with zipfile.ZipFile(wheel) as archive:
        stem = wheel.name.split("-py3")[0]
        text = archive.read(f"{stem}.dist-info/METADATA").decode()
        return Parser().parsestr(text), set(archive.namelist())


def test_every_package_is_built_once_as_wheel_and_sdist_at_the_release(dist):
    stems = [f"{name.replace('-', '_')}-{RELEASE}" for name in PACKAGES]
    expected = {f"{stem}-py3-none-any.whl" for stem in stems}
    expected |= {f"{stem}.tar.gz" for stem in stems}
    assert {path.name for path in dist.iterdir()} == expected
    assert len(PACKAGES) == 9


def test_each_wheel_is_the_release_and_pins_the_release(dist):
    for name in PACKAGES:
        meta, _ = metadata_of(wheel_of(dist, name))
        assert meta["Name"] == name
        assert meta["Version"] == RELEASE
        pins = [
            Requirement(text)
            for text in meta.get_all("Requires-Dist") or []
            if text.startswith("wymcp")
        ]
        for pin in pins:
            assert pin.name in PACKAGES, (name, str(pin))
            assert str(pin.specifier) == f"=={RELEASE}", (name, str(pin))
    # the packages that build on others pin them (a test that cannot pass empty)
    meta, _ = metadata_of(wheel_of(dist, "wymcp-transport-aiohttp"))
    assert f"wymcp-conf=={RELEASE}" in meta.get_all("Requires-Dist")
    # the HTTP transport is HTTP only: the command and stdio are wymcp-cli's
    assert not any("transport-stdio" in r for r in meta.get_all("Requires-Dist"))


def test_the_wymcp_script_comes_from_the_cli_wheel_with_http_as_its_extra(dist):
    scripts = {}
    for name in PACKAGES:
        wheel = wheel_of(dist, name)
        stem = wheel.name.split("-py3")[0]
        with zipfile.ZipFile(wheel) as archive:
            listed = f"{stem}.dist-info/entry_points.txt"
            if listed in archive.namelist():
                text = archive.read(listed).decode()
                if "[console_scripts]" in text:
                    scripts[name] = text.split("[console_scripts]")[1].split()[:3]
    assert scripts == {"wymcp-cli": ["wymcp", "=", "wymcp.cli:main"]}
    meta, _ = metadata_of(wheel_of(dist, "wymcp-cli"))
    requires = meta.get_all("Requires-Dist")
    assert f"wymcp-transport-stdio=={RELEASE}" in requires
    assert f"wymcp-transport-aiohttp=={RELEASE}; extra == 'http'" in requires


def test_each_wheel_says_what_it_is_its_license_and_its_typing(dist):
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    for name, folder in PACKAGES.items():
        meta, files = metadata_of(wheel_of(dist, name))
        stem = f"{name.replace('-', '_')}-{RELEASE}"
        assert int(meta["Metadata-Version"].split(".")[1]) >= 4, name  # 2.4: PEP 639
        assert len(meta["Summary"]) > 30, name
        assert meta["Description-Content-Type"] == "text/markdown", name
        readme = (folder / "README.md").read_text(encoding="utf-8")
        assert meta.get_payload().strip() == readme.strip(), name
        assert meta["Requires-Python"] == ">=3.11", name
        assert meta["License-Expression"] == "MIT", name
        assert meta.get_all("License-File") == ["LICENSE"], name
        with zipfile.ZipFile(wheel_of(dist, name)) as archive:
            shipped = archive.read(f"{stem}.dist-info/licenses/LICENSE").decode()
        assert shipped == license_text, name
        classifiers = meta.get_all("Classifier") or []
        assert "Typing :: Typed" in classifiers, name
        assert "Programming Language :: Python :: 3.11" in classifiers, name
        assert any(c.startswith("Development Status ::") for c in classifiers), name
        module = name.removeprefix("wymcp-").replace("-", "/")
        assert f"wymcp/{module}/py.typed" in files, name
        assert "wymcp/__init__.py" not in files, name  # a namespace package


def test_each_sdist_holds_what_its_wheel_is_built_from(dist):
    for name in PACKAGES:
        stem = f"{name.replace('-', '_')}-{RELEASE}"
        with tarfile.open(dist / f"{stem}.tar.gz") as archive:
            names = set(archive.getnames())
            pyproject = archive.extractfile(f"{stem}/pyproject.toml")
            assert pyproject is not None
            config = tomllib.load(pyproject)
        for member in ("pyproject.toml", "PKG-INFO", "README.md", "LICENSE"):
            assert f"{stem}/{member}" in names, (name, member)
        assert config["project"]["version"] == RELEASE


def test_every_package_ships_the_root_license_unchanged():
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License")
    for folder in PACKAGES.values():
        assert (folder / "LICENSE").read_text(encoding="utf-8") == license_text
