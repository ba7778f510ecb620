"""A settings module whose LIFESPAN yields the state a tool and a resource read.

Every runner serves it in `integration/test_lifespan_every_runner.py`; when
`LIFESPAN_MARKS` names a file, each enter and leave is appended to it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from wymcp.core.schema import Resource, Tool

LABEL = "yielded by LIFESPAN"


def _mark(event: str) -> None:
    marks = os.environ.get("LIFESPAN_MARKS")
    if marks:
        with Path(marks).open("a", encoding="utf-8") as file:
            file.write(f"{event} {os.getpid()}\n")


@contextlib.asynccontextmanager
async def lifespan(settings: Any) -> AsyncIterator[dict[str, Any]]:
    _mark("enter")
    try:
        yield {"label": LABEL, "server": settings.SERVER_NAME, "pid": os.getpid()}
    finally:
        _mark("leave")


class Where(Tool):
    name = "where"
    description = "Answer what LIFESPAN yielded (ctx.state)."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        del arguments
        return {"label": ctx.state["label"], "pid": ctx.state["pid"]}


class Label(Resource):
    name = "label"
    uri = "state://label"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        del uri, params
        return str(ctx.state["label"])


TOOLS = ["lifespan_state.Where"]
RESOURCES = ["lifespan_state.Label"]
LIFESPAN = "lifespan_state.lifespan"
SERVER_NAME = "lifespan-everywhere"
STATE_SECRET = "lifespan-everywhere-fixture-key-not-a-secret-0000"
