"""`call()`: one tool call through the engine, in-process, no HTTP.

The call is sent to a `wymcp.core.server.Engine` as the transport would send
it (the same `Exchange`, headers and `_meta`), so the gates, the result
shaping and every refusal are the engine's own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from wymcp.conf import Settings, served_engine
from wymcp.core.schema import ToolSpec, prepare
from wymcp.core.server import (
    METHOD_NOT_FOUND,
    SESSION_HEADER,
    Engine,
    Exchange,
    Headers,
    error_message,
    is_stateless,
    mirrored_headers,
    request_message,
    request_meta,
    session_headers,
)
from wymcp.testing._answer import Answer
from wymcp.testing._direct_context import DirectContext, build_context
from wymcp.testing._recorder import Recorder
from wymcp.testing._tool_arguments import CLIENT_INFO, tool_arguments


def _engine(tool: object, settings: Settings | None) -> tuple[Engine, ToolSpec]:
    chosen = settings if settings is not None else Settings()
    if isinstance(tool, str):
        engine, _ = served_engine(chosen, runner="in_process")
        for spec in engine.tool_specs:
            if spec.name == tool:
                return engine, spec
        names = ", ".join(spec.name for spec in engine.tool_specs) or "(none)"
        raise LookupError(f"No tool named {tool!r} in TOOLS. Tools: {names}.")
    spec = prepare(tool)
    engine, _ = served_engine(chosen.evolve(TOOLS=(spec.tool,)), runner="in_process")
    return engine, spec


class _Session:
    """Drives one engine for one call, as a client over HTTP would."""

    def __init__(self, engine: Engine, ctx: DirectContext) -> None:
        self.engine = engine
        self.ctx = ctx
        self.headers: list[tuple[str, str]] = []
        self.version = ctx.protocol_version
        self._pending: set[asyncio.Task[Any]] = set()

    async def post(
        self, body: Mapping[str, Any], headers: list[tuple[str, str]], stream: Recorder
    ) -> Answer:
        exchange = Exchange(
            "POST", Headers.of(headers), dict(body), principal=self.ctx.principal
        )
        reply = await self.engine.post(exchange, stream)
        return Answer(
            status=200 if stream.opened else reply.status,
            response=reply.body,
            messages=tuple(stream.messages),
            headers={**stream.headers, **reply.headers},
        )

    def refuse(self, request: Mapping[str, Any]) -> None:
        """Answer a server-to-client request with an error, so nothing waits."""
        answer = error_message(
            request.get("id"),
            METHOD_NOT_FOUND,
            "wymcp.testing.call answers no client requests.",
        )
        task = asyncio.get_running_loop().create_task(
            self.post(answer, self.headers, Recorder())
        )
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def open(self) -> None:
        """Initialize a session (2025 revisions only)."""
        if is_stateless(self.version):
            return
        initialize = request_message(
            0,
            "initialize",
            {
                "protocolVersion": self.version,
                "capabilities": dict(self.ctx.client_capabilities),
                "clientInfo": CLIENT_INFO,
            },
        )
        answer = await self.post(initialize, [], Recorder())
        if answer.result is None:
            raise RuntimeError(f"initialize failed: {answer.response}")
        self.version = str(answer.result["protocolVersion"])
        self.headers = list(
            session_headers(self.version, answer.headers[SESSION_HEADER]).items()
        )
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await self.post(initialized, self.headers, Recorder())
        if self.ctx.log_level is not None:
            level = request_message(
                0, "logging/setLevel", {"level": self.ctx.log_level}
            )
            await self.post(level, self.headers, Recorder())

    async def call(self, spec: ToolSpec, arguments: dict[str, Any]) -> Answer:
        """Send the tools/call and return its answer."""
        params: dict[str, Any] = {"name": spec.name, "arguments": arguments}
        if is_stateless(self.version):
            params["_meta"] = request_meta(
                capabilities=self.ctx.client_capabilities,
                client_info=CLIENT_INFO,
                log_level=self.ctx.log_level,
                extra=self.ctx.meta,
            )
            headers = mirrored_headers("tools/call", params, spec.header_annotations)
        else:
            if self.ctx.meta:
                params["_meta"] = dict(self.ctx.meta)
            headers = self.headers
        body = request_message(self.ctx.request_id, "tools/call", params)
        return await self.post(body, headers, Recorder(self.refuse))

    async def close(self) -> None:
        """End the session and the engine."""
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        if self.headers:
            await self.engine.delete(Exchange("DELETE", Headers.of(self.headers)))
        await self.engine.aclose()


async def call(
    tool: object,
    action: str | None,
    data: Mapping[str, Any] | None = None,
    *,
    arguments: Mapping[str, Any] | None = None,
    ctx: DirectContext | None = None,
    settings: Settings | None = None,
) -> Answer:
    """Run one call through the gates and return what a wire call answers.

    `tool` is a Tool class or instance (or the name of one of
    `settings.TOOLS`); `action` is None for a plain tool, whose arguments
    are `data` (or `arguments`). `ctx` (from `build_context`) says how the
    call is made: revision, `_meta`, capabilities, log level, principal.
    `settings` (default: the defaults) configure the engine, e.g. `STRICT`.
    Refusals, tool errors and JSON-RPC errors all come back as an `Answer`;
    a tool that cannot be registered raises `ConfigurationError`.
    """
    context = ctx if ctx is not None else build_context()
    engine, spec = _engine(tool, settings)
    engine.state = context.state
    session = _Session(engine, context)
    try:
        await session.open()
        return await session.call(spec, tool_arguments(action, data, arguments))
    finally:
        await session.close()
