"""Every client request among the official 2026-07-28 examples is served, and
the answer validates against the official schema.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from wymcp.core.schema import Tool
from wymcp.core.server import Prompt, PromptArgument, Resource

EXAMPLES = Path(__file__).resolve().parents[1] / "mcp-schema/2026-07-28/examples"
SERVED = {
    "tools/call",
    "tools/list",
    "server/discover",
    "prompts/get",
    "prompts/list",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "completion/complete",
    "subscriptions/listen",
}


def requests() -> list[Path]:
    found = []
    for path in sorted(EXAMPLES.glob("*Request/*.json")):
        body = json.loads(path.read_text(encoding="utf-8"))
        if body.get("method") in SERVED:
            found.append(path)
    return found


class Weather(Tool):
    name = "get_weather"
    description = "Weather for a place."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"location": {"type": "string"}},
        "required": ["location"],
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return f"Sunny in {arguments['location']}"


class CodeReview(Prompt):
    name = "code_review"
    description = "Review code."
    arguments: ClassVar[Sequence[PromptArgument]] = (
        PromptArgument(name="code", required=True),
        PromptArgument(name="language"),
    )

    async def render(self, arguments: dict[str, str], ctx: Any) -> object:
        return f"Review:\n{arguments['code']}"

    def complete(
        self, argument: str, value: str, context: Mapping[str, str]
    ) -> Sequence[str]:
        return ["python", "pytorch"]


class MainRs(Resource):
    name = "main.rs"
    uri = "file:///project/src/main.rs"
    mime_type = "text/x-rust"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        return 'fn main() { println!("hi"); }'


class Files(Resource):
    name = "files"
    uri_template = "file:///{+path}"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        return params["path"]


@pytest.mark.parametrize("path", requests(), ids=lambda p: p.parent.name)
async def test_official_example_requests_are_served(make_wire, path):
    wire = make_wire(Weather, prompts=(CodeReview,), resources=(MainRs, Files))
    body = json.loads(path.read_text(encoding="utf-8"))
    method = body["method"]
    params = body["params"]
    headers = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", method)]
    if method in ("tools/call", "prompts/get"):
        headers.append(("Mcp-Name", params["name"]))
    if method == "resources/read":
        headers.append(("Mcp-Name", params["uri"]))
    stream = wire.Stream()
    if method == "subscriptions/listen":
        task = asyncio.create_task(wire.post(body, headers, stream=stream))
        for _ in range(5):
            await asyncio.sleep(0)
        await wire.engine.aclose()
        reply, _ = await task
    else:
        reply, _ = await wire.post(body, headers, stream=stream)
    assert reply.status == 200, reply.body
    assert reply.body["id"] == body["id"]
    assert "result" in reply.body
