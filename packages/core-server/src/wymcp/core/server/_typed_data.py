"""A typed action's gated data read into its class, off the event loop when large.

Structuring runs Python code per value (about 1.5 µs an item). Data of more than
`ON_LOOP_VALUES` JSON values is read in a worker thread, one job at a time per
engine (`OffLoopLane`); smaller data (every usual call) is read on the loop.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any, Final

from wymcp.core.schema import ToolSpec, dispatch_action
from wymcp.core.server._off_loop import OffLoopLane, yielding

ON_LOOP_VALUES: Final = 4096
"""The most JSON values read on the loop (a few milliseconds of structuring)."""


async def read_and_run(  # noqa: PLR0917 - the call's parts and the engine's lane
    spec: ToolSpec,
    action: str,
    reader: Callable[[Any], Any],
    data: dict[str, Any],
    ctx: object,
    lane: OffLoopLane | None = None,
) -> object:
    """Read `data` with `reader` (in a thread when large), then run the action.

    Large data is read through `lane` (one thread at a time), or in a thread
    of its own without one. `UnreadableDataError` (values the class cannot
    hold) propagates to the caller.
    """
    if more_values_than(data, ON_LOOP_VALUES):
        work = functools.partial(reader, data)
        if lane is None:
            argument = await asyncio.to_thread(yielding, work)
        else:
            argument = await lane.run(work)
    else:
        argument = reader(data)
    return await dispatch_action(spec.tool, action, argument, ctx, read=False)


def more_values_than(data: object, limit: int) -> bool:
    """Whether `data` holds more than `limit` JSON values (looks at that many).

    Only containers wait on the stack: a scalar is counted with its container
    (a 50-item order: ~186k instructions, not ~235k with every value pushed).
    """
    seen = 1
    kind: type = data.__class__
    stack: list[Any] = [data] if kind is dict or kind is list else []
    while stack:
        node = stack.pop()
        children: Any = node.values() if node.__class__ is dict else node
        seen += len(children)
        if seen > limit:
            return True
        for child in children:
            kind = child.__class__
            if kind is dict or kind is list:
                stack.append(child)
    return False
