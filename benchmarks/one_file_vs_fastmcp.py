"""What a model sees of examples/bookmarks.py and of its fastmcp twin (docs/tools.md).

Prints each server's lines of code, its tools/list (bytes per tool, compact JSON)
and its answer to one mistaken call, both driven over stdio by the official SDK
client. Run it with a Python that has fastmcp (locks/bench-fastmcp.txt):

    .cache/uv/bin/uv venv /tmp/fastmcp && VIRTUAL_ENV=/tmp/fastmcp \\
        .cache/uv/bin/uv pip sync locks/bench-fastmcp.txt
    /tmp/fastmcp/bin/python benchmarks/one_file_vs_fastmcp.py
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
WYMCP = ROOT / ".venv" / "bin" / "wymcp"
MISTAKE = {"titel": "X", "url": 5, "tags": "a"}


def twin() -> str:
    """The fastmcp server docs/tools.md shows beside examples/bookmarks.py."""
    page = (ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    found = re.search(r"```python\n(# bookmarks_fastmcp\.py.*?)```", page, re.DOTALL)
    if found is None:
        raise SystemExit("docs/tools.md no longer shows the fastmcp twin")
    return found.group(1)


def code_lines(text: str) -> tuple[int, int]:
    lines = text.splitlines()
    code = [s for s in lines if s.strip() and not s.strip().startswith("#")]
    return len(lines), len(code)


async def probe(name: str, server: StdioServerParameters, tool: str, args: Any) -> None:
    async with Client(server) as client:
        listed = (await client.list_tools()).tools
        shown = [
            t.model_dump(mode="json", exclude_none=True, by_alias=True) for t in listed
        ]
        sizes = {t["name"]: len(json.dumps(t, separators=(",", ":"))) for t in shown}
        print(f"{name}: tools/list {sum(sizes.values())} B {sizes}")
        answer = await client.call_tool(tool, args)
        text = "\n".join(block.model_dump()["text"] for block in answer.content)
        print(f"{name}: refusal is_error={answer.is_error} {len(text.encode())} B")
        print(text)


async def main() -> None:
    example = (ROOT / "examples" / "bookmarks.py").read_text(encoding="utf-8")
    source = twin()
    print("wymcp lines (all, code):", code_lines(example))
    print("fastmcp lines (all, code):", code_lines(source))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bookmarks_fastmcp.py"
        path.write_text(source, encoding="utf-8")
        await probe(
            "wymcp",
            StdioServerParameters(
                command=str(WYMCP),
                args=["stdio", "--settings", "bookmarks"],
                cwd=str(ROOT / "examples"),
            ),
            "bookmarks",
            {"action": "add", "data": MISTAKE},
        )
        await probe(
            "fastmcp",
            StdioServerParameters(command=sys.executable, args=[str(path)]),
            "bookmarks_add",
            MISTAKE,
        )


if __name__ == "__main__":
    asyncio.run(main())
