"""Build the sans-I/O engine a transport serves from loaded settings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from wymcp.conf._settings import Settings

if TYPE_CHECKING:
    from wymcp.core.server import Engine, EngineOptions


def engine_options(settings: Settings) -> EngineOptions:
    """Translate settings into the engine's options (same names, lower case)."""
    from wymcp.core.server import EngineOptions  # noqa: PLC0415 - see build_engine

    return EngineOptions(
        server_name=settings.SERVER_NAME,
        server_version=settings.SERVER_VERSION,
        instructions=settings.INSTRUCTIONS,
        protocol_versions=settings.PROTOCOL_VERSIONS,
        strict=settings.STRICT,
        state_secret=settings.STATE_SECRET,
        state_secrets=settings.STATE_SECRETS,
        page_size=settings.PAGE_SIZE,
        session_idle_timeout=settings.SESSION_IDLE_TIMEOUT,
        max_sessions=settings.MAX_SESSIONS,
        call_timeout=settings.CALL_TIMEOUT,
        result_limit=settings.RESULT_LIMIT,
        expose_exception_messages=settings.EXPOSE_EXCEPTION_MESSAGES,
        max_streams=settings.MAX_STREAMS,
        max_streams_per_client=settings.MAX_STREAMS_PER_CLIENT,
        task_ttl=settings.TASK_TTL,
        task_poll_interval_ms=settings.TASK_POLL_INTERVAL,
        max_tasks=settings.MAX_TASKS,
        max_tasks_per_principal=settings.MAX_TASKS_PER_PRINCIPAL,
    )


def build_engine(settings: Settings, **options: Any) -> Engine:
    """Return an engine serving the settings' tools, resources and prompts.

    Raises `wymcp.core.schema.ConfigurationError` naming the tool, the action
    and what is wrong when a declaration cannot be served. The engine is
    imported here, not with `wymcp.conf`, so loading and checking settings
    stays cheap. `options` set engine options no setting names, for a
    transport's own needs (the stdio transport's session store).
    """
    from wymcp.core.server import Engine  # noqa: PLC0415 - imported when needed

    chosen = engine_options(settings)
    if options:
        chosen = attrs.evolve(chosen, **options)

    return Engine(
        # A class gets a fresh instance per engine: two apps in one process (or
        # two tests) never share a tool's state through the class.
        tools=tuple(t() if isinstance(t, type) else t for t in settings.TOOLS),
        resources=settings.RESOURCES,
        prompts=settings.PROMPTS,
        options=chosen,
    )
