"""Build the engine (`wymcp.core.server.Engine`) a transport serves from settings.

The engine options come from the declarations (`engine=` of each setting);
`PROGRAMMATIC_ONLY` says why the other `EngineOptions` fields have no setting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from wymcp.conf._settings import DECLARATIONS, Settings

if TYPE_CHECKING:
    from wymcp.core.server import Engine, EngineOptions

PROGRAMMATIC_ONLY: Final = {
    "retry_after": (
        "the seconds a 503 asks a client to wait; the transport's own 503s use "
        "the same protocol constant, and a setting would let the two disagree"
    ),
    "session_store": (
        "an object, not a value: the transport picks it (memory, or Redis with "
        "`BROKER`; the stdio transport's never expires)"
    ),
    "task_store": "an object, not a value: a deployment passes its own store in code",
    "rate_store": (
        "an object, not a value: the transport picks it (memory, or Redis with "
        "`BROKER`)"
    ),
    "clock": "a function: tests pass a fake clock",
    "wall_clock": "a function: tests pass a fake clock",
}
"""Each `EngineOptions` field no setting feeds, and why it is set in code only."""


def engine_options(settings: Settings, **options: Any) -> EngineOptions:
    """The engine's options: each setting's declared `engine` field, then `options`."""
    from wymcp.core.server import EngineOptions  # noqa: PLC0415 - see build_engine

    chosen = {
        declaration.engine: getattr(settings, name)
        for name, declaration in DECLARATIONS.items()
        if declaration.engine is not None
    }
    return EngineOptions(**(chosen | options))


def build_engine(settings: Settings, **options: Any) -> Engine:
    """Return an engine serving the settings' tools, resources and prompts.

    Raises `wymcp.core.schema.ConfigurationError` naming the tool, the action
    and what is wrong when a declaration cannot be served. The engine is
    imported here, not with `wymcp.conf`, so loading and checking settings
    stays cheap. `options` set engine options no setting names, for a
    transport's own needs (the stdio transport's session store).
    """
    from wymcp.core.server import Engine  # noqa: PLC0415 - imported when needed

    return Engine(
        # A class gets a fresh instance per engine: two apps in one process (or
        # two tests) never share a tool's state through the class.
        tools=tuple(t() if isinstance(t, type) else t for t in settings.TOOLS),
        resources=settings.RESOURCES,
        prompts=settings.PROMPTS,
        options=engine_options(settings, **options),
    )
