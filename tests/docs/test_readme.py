"""The README's one-file server runs as printed and answers as the README says."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from wymcp.conf import load_settings
from wymcp.testing import (
    assert_refused,
    assert_succeeded,
    assert_tool_error,
    call,
    connect,
)

README = Path(__file__).resolve().parents[2] / "README.md"
EXAMPLE = README.parent / "examples" / "bookmarks.py"


@pytest.fixture
def bookmarks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    server = blocks[0]
    assert server.startswith("# bookmarks.py")
    assert server == EXAMPLE.read_text(encoding="utf-8"), "README and example differ"
    (tmp_path / "bookmarks.py").write_text(server)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("bookmarks", None)
    yield "bookmarks"
    sys.modules.pop("bookmarks", None)


async def test_the_one_file_server_adds_and_finds(bookmarks: str) -> None:
    async with connect(bookmarks) as client:
        data = {"title": "A", "url": "https://a.io"}
        added = await client.call("bookmarks", "add", data)
        assert assert_succeeded(added) == {**data, "tags": None}
        found = await client.call("bookmarks", "find", {})
        assert assert_succeeded(found) == {"items": [{**data, "tags": None}]}


async def test_a_misspelt_key_is_refused_as_the_readme_says(bookmarks: str) -> None:
    settings = load_settings(bookmarks)
    answer = await call(
        "bookmarks", "add", {"titel": "X", "url": "https://x.io"}, settings=settings
    )
    refusal = assert_refused(answer, "unknown_params", path="data.titel")
    assert refusal["missing"] == ["title"]
    assert refusal["did_you_mean"] == {"data.titel": "data.title"}
    assert refusal["help"] == 'help {tool: "bookmarks", action: "add"}'
    assert "input_schema" in refusal


async def test_a_saved_url_is_a_tool_error(bookmarks: str) -> None:
    async with connect(bookmarks) as client:
        data = {"title": "A", "url": "https://a.io"}
        assert_succeeded(await client.call("bookmarks", "add", data))
        answer = await client.call("bookmarks", "add", data)
        assert "is saved already" in assert_tool_error(answer)


def test_the_readme_links_every_guide() -> None:
    text = README.read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(docs/([\w.-]+\.md)\)", text))
    guides = {p.name for p in (README.parent / "docs").glob("*.md")} - {"index.md"}
    assert guides - linked == set(), "add these guides to the README's Guides list"
    assert linked - guides == set(), "the README links guides that do not exist"
