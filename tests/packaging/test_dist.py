"""`just dist` builds every package, and they install from dist/ into a clean venv."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_dist_script():
    spec = importlib.util.spec_from_file_location(
        "wymcp_dist", ROOT / "scripts/dist.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def package_versions() -> dict[str, str]:
    found = {}
    for pyproject in ROOT.glob("packages/*/pyproject.toml"):
        project = tomllib.loads(pyproject.read_text())["project"]
        found[project["name"]] = project["version"]
    return found


def test_dist_installs_into_a_clean_venv_and_serves_the_readme(tmp_path):
    out = tmp_path / "dist"
    subprocess.run(  # noqa: S603 - our own scripts, fixed arguments
        [sys.executable, str(ROOT / "scripts/dist.py"), "--out", str(out)], check=True
    )
    versions = package_versions()
    names = sorted(p.name for p in out.iterdir())
    for name, version in versions.items():
        stem = f"{name.replace('-', '_')}-{version}"
        assert f"{stem}-py3-none-any.whl" in names
        assert f"{stem}.tar.gz" in names
    assert len(names) == 2 * len(versions)

    # a venv without the workspace, filled by the outer pip, as documented
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(  # noqa: S603 - our own scripts, fixed arguments
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--disable-pip-version-check",
            "--find-links",
            str(out),
            "wymcp-transport-aiohttp",
        ],
        check=True,
    )
    env = {
        k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}
    }
    done = subprocess.run(  # noqa: S603 - our own scripts, fixed arguments
        [str(env_dir / "bin" / "wymcp"), "--version"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    installed = dict(line.split(" ") for line in done.stdout.splitlines())
    # every package but the test helpers comes with the transport
    assert installed == {
        name: version for name, version in versions.items() if name != "wymcp-testing"
    }
    # installed, not linked to the workspace
    where = subprocess.run(  # noqa: S603 - our own scripts, fixed arguments
        [str(python), "-c", "import wymcp.conf; print(wymcp.conf.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=tmp_path,
    ).stdout
    assert where.startswith(str(env_dir))

    # the README's example checks with the installed command
    readme = (ROOT / "README.md").read_text()
    tools, settings = re.findall(r"```python\n(.*?)```", readme, re.DOTALL)[:2]
    (tmp_path / "myapp").mkdir()
    (tmp_path / "myapp" / "__init__.py").write_text("")
    (tmp_path / "myapp" / "tools.py").write_text(tools)
    (tmp_path / "myapp" / "settings.py").write_text(settings)
    checked = subprocess.run(  # noqa: S603 - our own scripts, fixed arguments
        [str(env_dir / "bin" / "wymcp"), "check", "--settings", "myapp.settings"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=tmp_path,
    )
    assert checked.returncode == 0, checked.stderr


def test_a_pin_that_names_another_version_is_refused():
    dist = load_dist_script()
    found = {
        "wymcp-a": (Path("a"), {"project": {"version": "0.2.0", "dependencies": []}}),
        "wymcp-b": (
            Path("b"),
            {
                "project": {
                    "version": "0.2.0",
                    "dependencies": ["wymcp-a==0.1.0", "wymcp_c==0.2.0", "aiohttp>=3"],
                }
            },
        ),
    }
    assert dist.version_problems(found) == [
        "wymcp-b pins wymcp-a==0.1.0, but wymcp-a is 0.2.0",
        "wymcp-b requires wymcp-c, which is no package here",
    ]


def test_the_workspace_pins_agree():
    dist = load_dist_script()
    assert dist.version_problems(dist.packages()) == []
