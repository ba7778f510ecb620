"""The README's 20-line example runs as printed and answers as the README says."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from wymcp.conf import load_settings
from wymcp.testing import assert_refused, assert_succeeded, assert_tool_error, call

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture
def myapp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    tools, settings = blocks[0], blocks[1]
    assert tools.startswith("# myapp/tools.py")
    assert settings.startswith("# myapp/settings.py")
    package = tmp_path / "myapp"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tools.py").write_text(tools)
    (package / "settings.py").write_text(settings)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "myapp.settings"
    for name in [m for m in sys.modules if m == "myapp" or m.startswith("myapp.")]:
        del sys.modules[name]


async def test_the_example_tool_serves_adds_and_gets(myapp: str) -> None:
    settings = load_settings(myapp)
    answer = await call("notes", "add", {"text": "hi"}, settings=settings)
    assert assert_succeeded(answer) == {"id": 1}


async def test_a_misspelt_key_is_refused_as_the_readme_says(myapp: str) -> None:
    settings = load_settings(myapp)
    answer = await call("notes", "add", {"txt": "hi"}, settings=settings)
    refusal = assert_refused(answer, "unknown_params", path="data.txt")
    assert refusal["missing"] == ["text"]
    assert refusal["did_you_mean"] == {"data.txt": "data.text"}
    assert refusal["help"] == 'help {tool: "notes", action: "add"}'
    assert "input_schema" in refusal


async def test_a_missing_note_is_a_tool_error(myapp: str) -> None:
    settings = load_settings(myapp)
    answer = await call("notes", "get", {"id": 5}, settings=settings)
    assert "no note 5" in assert_tool_error(answer)


def test_the_readme_links_every_guide() -> None:
    text = README.read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(docs/([\w.-]+\.md)\)", text))
    guides = {p.name for p in (README.parent / "docs").glob("*.md")} - {"index.md"}
    assert guides - linked == set(), "add these guides to the README's Guides list"
    assert linked - guides == set(), "the README links guides that do not exist"
