"""The guides' examples run as printed and answer as the guides say.

Each guide's ```python blocks are written, in order, into one module of its own
(so annotations resolve as in a user's file), imported, and exercised; a block
that opens with a file name (`# bookmarks_fastmcp.py`) is another file, left out.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from wymcp.conf import Settings
from wymcp.core.schema import prepare
from wymcp.testing import assert_refused, build_context, call, connect

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _module(doc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    text = (DOCS / doc).read_text(encoding="utf-8")
    found = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    # a block opening with a file name (`# bookmarks_fastmcp.py`) is another file
    blocks = [b for b in found if not re.match(r"# [\w/]+\.py\b", b)]
    assert blocks, doc
    name = "guide_" + doc.removesuffix(".md").replace("-", "_")
    (tmp_path / f"{name}.py").write_text("\n\n".join(blocks), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    return importlib.import_module(name)


@pytest.fixture
def tools_md(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    return _module("tools.md", tmp_path, monkeypatch)


@pytest.fixture
def context_md(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    return _module("context.md", tmp_path, monkeypatch)


@pytest.fixture
def resources_md(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    return _module("resources-and-prompts.md", tmp_path, monkeypatch)


def test_both_styles_publish_the_same_add(tools_md: ModuleType) -> None:
    typed, plain = prepare(tools_md.Notes), prepare(tools_md.DictNotes)
    assert typed.actions["add"].published == plain.actions["add"].published
    assert typed.output_schema == plain.output_schema


def test_the_parameters_form_publishes_the_typed_add(tools_md: ModuleType) -> None:
    typed, short = prepare(tools_md.Notes), prepare(tools_md.ShortNotes)
    assert short.actions["add"].published == typed.actions["add"].published
    assert short.output_schema == typed.output_schema


async def test_the_parameters_form_answers_and_refuses_as_the_typed_one(
    tools_md: ModuleType,
) -> None:
    for tool in (tools_md.Notes(), tools_md.ShortNotes()):
        added = await call(tool, "add", {"text": "Buy milk", "pinned": True})
        assert added.value == {"id": 1, "text": "Buy milk", "pinned": True}
        refused = await call(tool, "add", {"txt": "x"})
        refusal = assert_refused(refused, "unknown_params", path="data.txt")
        assert refusal["did_you_mean"] == {"data.txt": "data.text"}


async def test_both_styles_answer_and_refuse_alike(tools_md: ModuleType) -> None:
    for tool in (tools_md.Notes(), tools_md.DictNotes()):
        added = await call(tool, "add", {"text": "Buy milk"})
        assert added.result is not None
        expected = {"id": 1, "text": "Buy milk", "pinned": False}
        assert added.result["structuredContent"] == expected
        assert json.loads(added.result["content"][0]["text"]) == expected
        got = await call(tool, "get", {"id": 1})
        assert got.result is not None
        assert got.result["structuredContent"] == expected
        missing = await call(tool, "get", {"id": 9})
        assert missing.result is not None
        assert missing.result["isError"] is True
        assert missing.result["content"][0]["text"] == "No note has that id."
        refused = await call(tool, "add", {"text": "", "tag": 1})
        assert_refused(refused, "unknown_params", path="data.tag")


async def test_hints_ride_beside_the_value(tools_md: ModuleType) -> None:
    answer = await call(tools_md.HintedNotes(), "add", {"text": "x"})
    assert answer.result is not None
    shown = json.loads(answer.result["content"][0]["text"])
    assert shown["hints"] == [
        {
            "tool": "hinted_notes",
            "action": "get",
            "description": "Read the note back.",
            "example": {"id": 1},
        }
    ]
    assert "hints" not in answer.result["structuredContent"]


async def test_the_context_example_reports_progress(context_md: ModuleType) -> None:
    ctx = build_context(progress_token="p1", log_level="info")
    answer = await call(context_md.Importer, "run_import", {"rows": 3}, ctx=ctx)
    assert answer.result is not None
    assert answer.result["structuredContent"] == {"rows": 3, "by": None}
    methods = [m["method"] for m in answer.messages]
    assert methods == ["notifications/progress"] * 3 + ["notifications/message"]


async def test_the_lifespan_example_opens_and_closes(context_md: ModuleType) -> None:
    async with context_md.lifespan(Settings()) as pool:
        assert pool.open is True
    assert pool.open is False


async def test_the_resource_and_prompt_examples_serve(
    resources_md: ModuleType,
) -> None:
    settings = Settings().evolve(
        RESOURCES=[resources_md.Readme, resources_md.NoteText],
        PROMPTS=[resources_md.Summarise],
    )
    async with connect(settings) as client:
        read = await client.request("resources/read", {"uri": "notes://2"})
        assert read.result is not None
        assert read.result["contents"][0]["text"] == "Call Ada"
        missing = await client.request("resources/read", {"uri": "notes://7"})
        assert missing.error is not None
        completed = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/resource", "uri": "notes://{id}"},
                "argument": {"name": "id", "value": "1"},
            },
        )
        assert completed.result is not None
        assert completed.result["completion"]["values"] == ["1"]
        got = await client.request(
            "prompts/get",
            {"name": "summarise", "arguments": {"style": "detailed", "focus": "Ada"}},
        )
        assert got.result is not None
        text = got.result["messages"][0]["content"]["text"]
        assert text == "Write a detailed summary of my notes, about Ada."
        refused = await client.request(
            "prompts/get", {"name": "summarise", "arguments": {"style": "long"}}
        )
        assert refused.error is not None
        assert refused.error["code"] == -32602
