"""A settings module whose one tool answers which event loop runs it.

`integration/test_loop_every_runner.py` serves it with `WYMCP_LOOP` set and
checks each runner picked the loop `LOOP` names.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from wymcp.core.schema import Tool


class WhichLoop(Tool):
    name = "which_loop"
    description = "Answer the module of the running event loop's class."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        del arguments, ctx
        return {"loop": type(asyncio.get_running_loop()).__module__}


TOOLS = ["loop_probe.WhichLoop"]
SERVER_NAME = "loop-probe"
STATE_SECRET = "loop-probe-fixture-key-not-a-secret-000000000000"
