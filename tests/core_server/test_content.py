"""Content helpers, ToolResult and Hint."""

from __future__ import annotations

from typing import Any

import pytest

from wymcp.core.schema import Tool
from wymcp.core.server import (
    Hint,
    ToolResult,
    audio,
    embedded_resource,
    image,
    resource_contents,
    resource_link,
    text,
)


def test_blocks():
    assert text("a").to_json() == {"type": "text", "text": "a"}
    assert image(b"\x00", "image/png").to_json() == {
        "type": "image",
        "data": "AA==",
        "mimeType": "image/png",
    }
    assert audio("AA==", "audio/wav").to_json()["data"] == "AA=="
    assert embedded_resource("x://r", blob=b"\x00").to_json() == {
        "type": "resource",
        "resource": {"uri": "x://r", "blob": "AA=="},
    }
    assert resource_link("x://r", "r", title="R", size=3).to_json() == {
        "type": "resource_link",
        "uri": "x://r",
        "name": "r",
        "title": "R",
        "size": 3,
    }


@pytest.mark.parametrize("kwargs", [{}, {"text": "a", "blob": b"b"}])
def test_resource_contents_take_exactly_one_body(kwargs):
    with pytest.raises(ValueError, match="exactly one"):
        resource_contents("x://r", **kwargs)


def test_hint_shape_and_checks():
    assert Hint(tool="t", action="a", description="d").to_json() == {
        "tool": "t",
        "action": "a",
        "description": "d",
    }
    assert Hint(tool="t", action="a", description="d", example={"x": 1}).to_json()[
        "example"
    ] == {"x": 1}
    with pytest.raises(TypeError, match="tool must be a string"):
        Hint(tool=1, action="a", description="d")  # type: ignore[arg-type]


class Explicit(Tool):
    name = "explicit"
    description = "Returns a ToolResult."

    def hints(self, action: Any, hint_context: Any) -> list[Hint]:
        if hint_context != "next":
            return []
        return [Hint(tool="explicit", action=hint_context, description="d")]

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        mode = arguments.get("mode")
        if mode == "structured":
            return ToolResult(structured={"n": 1})
        if mode == "error":
            return ToolResult(content=[text("bad")], is_error=True)
        if mode == "list":
            return [1, 2]
        if mode == "none":
            return None
        if mode == "hinted":
            return ToolResult(content=[text("hi")], hint_context="next")
        return ToolResult(content=[text("hi")], structured={"n": 2})


Explicit.input_schema = {
    "type": "object",
    "properties": {"mode": {"type": "string"}},
    "additionalProperties": False,
}


@pytest.fixture
def wire(make_wire):
    return make_wire(Explicit)


async def test_tool_result_forms(wire):
    async def call(mode: str | None) -> dict[str, Any]:
        arguments = {} if mode is None else {"mode": mode}
        reply, _ = await wire.modern(
            "tools/call", {"name": "explicit", "arguments": arguments}
        )
        return reply.body["result"]

    assert (await call("structured"))["content"] == [
        {"type": "text", "text": '{"n":1}'}
    ]
    error = await call("error")
    assert error["isError"] is True
    assert error["content"] == [{"type": "text", "text": "bad"}]
    assert (await call("list"))["content"] == [{"type": "text", "text": "[1,2]"}]
    assert (await call("none"))["content"] == []
    assert (await call(None))["content"] == [{"type": "text", "text": "hi"}]
    hinted = (await call("hinted"))["content"]
    assert hinted[1]["text"] == (
        '{"hints":[{"tool":"explicit","action":"next","description":"d"}]}'
    )
