"""mypy --strict over every ```python block of the guides (docs/*.md), ctx: Context.

A guide's blocks form its modules in order: a block whose first line names a file
(`# shop/tools.py`, `# conftest.py: ...`) is (or goes on with) that file, any
other block goes on with the guide's own module `guide_<name>.py`. A block
that is no Python module (a signature, an excerpt of wymcp's own source) is
fenced ```text instead.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
FILE_MARK = re.compile(r"# ([\w/]+\.py)\b")
GUIDES = sorted(p for p in DOCS.glob("*.md") if BLOCK.search(p.read_text("utf-8")))
CONFIG = """\
[mypy]
strict = True
[mypy-myproject.introspection]
ignore_missing_imports = True
[mypy-fastmcp.*]
ignore_missing_imports = True
[mypy-bookmarks_fastmcp]
disallow_untyped_decorators = False
"""
"""The modules the guides name without shipping them: an RFC 7662 client, and
fastmcp (docs/tools.md sets a server beside its fastmcp twin; not installed
here, so its decorators are untyped in that one module)."""


def modules(text: str, name: str) -> dict[str, str]:
    """The files a guide's blocks make, by relative path."""
    found: dict[str, list[str]] = {}
    for block in BLOCK.findall(text):
        mark = FILE_MARK.match(block)
        path = mark.group(1) if mark is not None else f"guide_{name}.py"
        found.setdefault(path, []).append(block)
    return {path: "\n\n".join(blocks) for path, blocks in found.items()}


def test_every_guide_with_code_is_checked() -> None:
    names = {p.stem for p in GUIDES}
    assert {"tools", "context", "tasks", "resources-and-prompts", "testing"} <= names


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.stem)
def test_every_ctx_of_the_guide_is_annotated_context(guide: Path) -> None:
    for block in BLOCK.findall(guide.read_text("utf-8")):
        for signature in re.findall(r"def \w+\((.*?)\)\s*(?:->|:)", block, re.DOTALL):
            for parameter in re.findall(r"\bctx\b[^,]*", signature):
                assert re.fullmatch(r"ctx: Context\b.*", parameter.strip()), (
                    f"{guide.name}: {parameter.strip()!r} is not annotated Context"
                )


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for the guides' runs: wymcp and its dependencies are
    analysed once, not once per guide (3-4 s each); each run still checks its
    guide's files, whose cached entries mypy keys by their contents."""
    return tmp_path_factory.mktemp("mypy-cache")


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.stem)
def test_the_guide_s_python_blocks_pass_mypy_strict(
    guide: Path, tmp_path: Path, mypy_cache: Path
) -> None:
    name = guide.stem.replace("-", "_")
    tree = tmp_path / name
    files = []
    for relative, source in modules(guide.read_text("utf-8"), name).items():
        path = tree / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        files.append(str(path))
    (tmp_path / "mypy.ini").write_text(CONFIG, encoding="utf-8")
    env = {
        **os.environ,
        "MYPYPATH": os.pathsep.join([str(tree), str(ROOT / "examples")]),
    }
    run = subprocess.run(  # noqa: S603 - mypy over files this test wrote
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(tmp_path / "mypy.ini"),
            "--cache-dir",
            str(mypy_cache),
            "--follow-imports",
            "silent",
            "--explicit-package-bases",
            *files,
        ],
        capture_output=True,
        text=True,
        cwd=tree,
        env=env,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Success: no issues found" in run.stdout
