"""`loop_factory`: the event loop the runners serve on, as `LOOP` names it."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable

from wymcp.conf._settings import Settings

LoopFactory = Callable[[], asyncio.AbstractEventLoop]


def loop_factory(settings: Settings) -> LoopFactory:
    """Return what makes a new loop of the kind `settings.LOOP` names.

    `asyncio`: the standard library's default loop; `uvloop`: uvloop's (raises
    `ModuleNotFoundError` naming the `[uvloop]` extra when it is not installed;
    `run_checks` reports that as wymcp.E014 before a runner gets here).
    """
    if settings.LOOP == "uvloop":
        try:
            uvloop = importlib.import_module("uvloop")
        except ModuleNotFoundError as exc:
            message = (
                'LOOP is "uvloop" but uvloop is not installed: pip install '
                '"wymcp-transport-aiohttp[uvloop]" (wymcp.E014)'
            )
            raise ModuleNotFoundError(message, name="uvloop") from exc
        factory: LoopFactory = uvloop.new_event_loop
        return factory
    return asyncio.new_event_loop
