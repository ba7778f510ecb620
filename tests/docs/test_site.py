"""The docs site build (`just docs`) is strict: every kind of broken page fails it.

Each test builds a small site with the real docs/conf.py and docs/_ext in a
temporary folder, so the breakage is introduced without touching docs/.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SPHINX = Path(sys.executable).parent / "sphinx-build"

GOOD_GUIDE = """\
# A guide

See [the other heading](#the-other-heading) and [the API](api/gates.rst).

## The other heading

`wymcp.core.gates` checks a call.
"""

BROKEN_MODULE = '''\
"""A module whose docstring names a type that does not exist."""


def described() -> None:
    """Return what :class:`wymcp.core.gates._verdict.NoSuchVerdict` says."""
'''

BARE_FACADE = '''\
"""A facade whose exports have no docstring."""

__all__ = ["LIMIT", "undocumented"]

LIMIT = 3


def undocumented() -> None:
    pass
'''


def _site(tmp_path: Path, index: str, pages: dict[str, str]) -> Path:
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(DOCS / "conf.py", source / "conf.py")
    shutil.copytree(
        DOCS / "_ext", source / "_ext", ignore=shutil.ignore_patterns("__pycache__")
    )
    (source / "index.md").write_text(index, encoding="utf-8")
    for name, text in pages.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text, encoding="utf-8")
    return source


def _build(source: Path, *, facades: str) -> subprocess.CompletedProcess[str]:
    """The `just docs` command line, run on `source`, with only `facades` paged."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    return subprocess.run(  # noqa: S603 - our own sphinx-build, fixed arguments
        [
            str(SPHINX),
            *("-E", "-W", "--keep-going", "-n", "-q", "-b", "html"),
            *("-D", f"facade_api_facades={facades}"),
            str(source),
            str(source.parent / "html"),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


INDEX = "# Site\n\n```{toctree}\nguide\napi/gates\n```\n"
API = "Gates\n=====\n\n.. facade-api:: wymcp.core.gates\n"


def test_a_clean_site_builds_with_its_api_page(tmp_path: Path) -> None:
    source = _site(tmp_path, INDEX, {"guide.md": GOOD_GUIDE, "api/gates.rst": API})
    built = _build(source, facades="wymcp.core.gates")
    assert built.returncode == 0, built.stderr
    page = (tmp_path / "html" / "api" / "gates.html").read_text(encoding="utf-8")
    # every name of the facade's __all__ is documented, with its docstring
    assert 'id="wymcp.core.gates.check"' in page
    assert 'id="wymcp.core.gates.ECHO_LIMIT"' in page
    assert "Longest piece of a request" in page
    assert "int([x])" not in page  # a constant never shows the docstring of int


def test_each_kind_of_breakage_fails_the_build(tmp_path: Path) -> None:
    index = INDEX.replace(
        "api/gates\n", "api/gates\napi/broken\napi/bare\nno-such-page\n"
    )
    guide = GOOD_GUIDE + (
        "\n[a missing page](nowhere.md), [a missing heading](#no-such-heading)\n"
    )
    source = _site(
        tmp_path,
        index,
        {
            "guide.md": guide,
            "api/gates.rst": API,
            "api/broken.rst": "Broken\n======\n\n.. autofunction:: broken.described\n",
            "broken.py": BROKEN_MODULE,
            "stray.md": "# In no toctree\n",
            "api/bare.rst": "Bare\n====\n\n.. facade-api:: bare\n",
            "bare/__init__.py": BARE_FACADE,
        },
    )
    built = _build(source, facades="wymcp.core.gates,wymcp.testing,bare")
    assert built.returncode != 0
    for problem in [
        "nowhere.md",  # a link to a page that does not exist
        "no-such-heading",  # a link to a heading that does not exist
        "no-such-page",  # a toctree entry that names no page
        "isn't included in any toctree",  # a page no navigation reaches
        "wymcp.core.gates._verdict.NoSuchVerdict",  # a docstring reference
        "facade wymcp.testing has no page",  # a facade without its API page
        "bare.undocumented is exported without a docstring",
        "bare.LIMIT is exported without a docstring",
    ]:
        assert problem in built.stderr, (problem, built.stderr)
    assert "wymcp.core.gates.check" not in built.stderr  # the good page stays good


def test_every_layer_has_its_api_page() -> None:
    conf = ast.parse((DOCS / "conf.py").read_text(encoding="utf-8"))
    facades = next(
        ast.literal_eval(node.value)
        for node in conf.body
        if isinstance(node, ast.Assign)
        and getattr(node.targets[0], "id", "") == "facade_api_facades"
    )
    with (ROOT / "pyproject.toml").open("rb") as file:
        contracts = tomllib.load(file)["tool"]["importlinter"]["contracts"]
    # a layer may hold siblings ("a | b"), listed in any order among themselves
    groups = [
        layer.split(" | ")
        for layer in reversed(
            tuple(next(c["layers"] for c in contracts if c["type"] == "layers"))
        )
    ]
    layers = [name for group in groups for name in group]
    # a facade inside a layer (wymcp.core.server.tools, the authors') follows it
    inner = [f for f in facades if any(f.startswith(f"{layer}.") for layer in layers)]
    assert inner == ["wymcp.core.server.tools"]
    assert facades.index(inner[0]) == facades.index("wymcp.core.server") + 1
    outer = [f for f in facades if f not in inner]
    starts = [sum(len(g) for g in groups[:i]) for i in range(len(groups))]
    assert [
        set(outer[s : s + len(g)]) for s, g in zip(starts, groups, strict=True)
    ] == [set(g) for g in groups], "docs/conf.py lists the facades lowest layer first"
    pages = {p.stem for p in (DOCS / "api").glob("*.rst")}
    assert pages == set(facades)
