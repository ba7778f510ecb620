"""The engine: one HTTP exchange in, one reply out, for every revision.

It routes a message to the stateless 2026-07-28 path (the validation ladder
of mcp-server-requirements.md §1.5) or to the session path of the 2025
revisions, runs the method handler and shapes the answer.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import attrs

from wymcp.core.schema import ToolSpec, prepare_all
from wymcp.core.server._content import Content
from wymcp.core.server._context import ClientRequestError, ToolContext
from wymcp.core.server._cursor import page
from wymcp.core.server._exchange import Exchange, Headers, Reply, Stream
from wymcp.core.server._help import (
    HELP_NAME,
    answer_help,
    help_arguments,
    help_definition,
)
from wymcp.core.server._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SESSION_NOT_FOUND,
    UNSUPPORTED_VERSION,
    Incoming,
    RpcError,
    classify,
    echo,
    error_response,
    notification,
    request_id_of,
    response,
)
from wymcp.core.server._levels import is_level
from wymcp.core.server._mirror import check_params, check_standard
from wymcp.core.server._options import EngineOptions
from wymcp.core.server._revision import (
    HANDSHAKE,
    LEGACY,
    META_CAPABILITIES,
    META_LOG_LEVEL,
    META_SERVER_INFO,
    META_VERSION,
    MODERN,
    has_titles,
    is_modern,
)
from wymcp.core.server._session import MemorySessionStore, Session, new_session_id
from wymcp.core.server._toolcall import (
    call_tool,
    gate_content,
    raised,
    unknown_tool,
)

_log = logging.getLogger("wymcp.core.server")

_MODERN_STATUS = {
    -32700: 400,
    -32600: 400,
    -32602: 400,
    -32020: 400,
    -32021: 400,
    -32022: 400,
    -32601: 404,
}
_SESSION_STATUS = {-32700: 400, -32600: 400}
_BEFORE_INITIALIZED = frozenset({"ping", "tools/list", "tools/call"})


@attrs.define(eq=False)
class Call:
    """One request being served: what handlers read."""

    id: str | int | None
    method: str
    params: Mapping[str, Any]
    meta: Mapping[str, Any]
    version: str
    headers: Headers
    stream: Stream | None
    principal: object | None
    capabilities: Mapping[str, Any]
    session: Session | None = None

    @property
    def modern(self) -> bool:
        """Whether the call is served at 2026-07-28."""
        return is_modern(self.version)


Handler = Callable[[Call], Awaitable[dict[str, Any]]]


def _invalid_request(reason: str, status: int = 400) -> RpcError:
    return RpcError(
        INVALID_REQUEST, "Invalid Request", {"reason": reason}, status=status
    )


def _invalid_params(reason: str) -> RpcError:
    return RpcError(INVALID_PARAMS, "Invalid params", {"reason": reason})


class Engine:
    """The sans-I/O MCP engine every transport drives.

    `tools` are Tool classes or instances; the help tool is added last.
    """

    def __init__(
        self,
        *,
        tools: Iterable[object],
        resources: Iterable[object] = (),
        prompts: Iterable[object] = (),
        options: EngineOptions | None = None,
    ) -> None:
        self.options = options or EngineOptions()
        opts = self.options
        self._specs: list[ToolSpec] = list(prepare_all(list(tools)))
        self._resources = list(resources)
        self._prompts = list(prompts)
        self._store = opts.session_store or MemorySessionStore(
            idle_timeout=opts.session_idle_timeout,
            max_sessions=opts.max_sessions,
            clock=opts.clock,
        )
        secret = opts.state_secret
        if secret is None:
            secret = secrets.token_bytes(32)
        self._secret = secret.encode() if isinstance(secret, str) else secret
        self._definitions: dict[str, list[dict[str, Any]]] = {}
        self._modern_methods: dict[str, Handler] = {
            "server/discover": self._discover,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
        }
        self._session_methods: dict[str, Handler] = {
            "ping": self._ping,
            "logging/setLevel": self._set_level,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
        }

    # ------------------------------------------------------------------ info

    def _server_info(self, version: str) -> dict[str, Any]:
        info: dict[str, Any] = {
            "name": self.options.server_name,
            "version": self.options.server_version,
        }
        if self.options.server_title is not None and has_titles(version):
            info["title"] = self.options.server_title
        return info

    def capabilities(self, version: str) -> dict[str, Any]:
        """The server capabilities announced at `version`."""
        del version
        caps: dict[str, Any] = {"tools": {"listChanged": True}, "logging": {}}
        return caps

    @property
    def tool_specs(self) -> tuple[ToolSpec, ...]:
        """The prepared tools, in `tools/list` order (help not included)."""
        return tuple(self._specs)

    def _tool_definitions(self, version: str) -> list[dict[str, Any]]:
        cached = self._definitions.get(version)
        if cached is not None:
            return cached
        definitions = [self._definition(s, version) for s in self._specs]
        definitions.append(help_definition())
        self._definitions[version] = definitions
        return definitions

    @staticmethod
    def _definition(spec: ToolSpec, version: str) -> dict[str, Any]:
        tool = spec.tool
        definition: dict[str, Any] = {"name": spec.name}
        title = getattr(tool, "title", None)
        if title and has_titles(version):
            definition["title"] = title
        definition["description"] = tool.description
        definition["inputSchema"] = dict(spec.input_schema)
        output = spec.output_schema
        if (
            output is not None
            and has_titles(version)
            and (is_modern(version) or output.get("type") == "object")
        ):
            definition["outputSchema"] = dict(output)
        annotations = getattr(tool, "annotations", None)
        if annotations:
            definition["annotations"] = dict(annotations)
        return definition

    # ------------------------------------------------------------------ POST

    async def post(self, exchange: Exchange, stream: Stream) -> Reply:
        """Answer one POSTed JSON-RPC message."""
        body = exchange.body
        try:
            incoming = classify(body)
        except RpcError as error:
            return Reply(400, error_response(request_id_of(body), error))
        if self._is_modern(incoming, exchange.headers):
            return await self._post_modern(incoming, exchange, stream)
        return await self._post_session(incoming, exchange, stream)

    @staticmethod
    def _is_modern(incoming: Incoming, headers: Headers) -> bool:
        meta = incoming.meta
        if META_VERSION in meta or META_CAPABILITIES in meta:
            return True
        versions = headers.getall("MCP-Protocol-Version")
        return bool(versions) and versions[0].strip() not in HANDSHAKE

    def _modern_reply(self, rid: str | int | None, error: RpcError) -> Reply:
        status = error.status or _MODERN_STATUS.get(error.code, 200)
        return Reply(status, error_response(rid, error), dict(error.headers))

    def _session_reply(self, rid: str | int | None, error: RpcError) -> Reply:
        status = error.status or _SESSION_STATUS.get(error.code, 200)
        return Reply(status, error_response(rid, error), dict(error.headers))

    def _finish_modern(self, result: dict[str, Any]) -> dict[str, Any]:
        result.setdefault("resultType", "complete")
        meta = dict(result.get("_meta") or {})
        meta[META_SERVER_INFO] = self._server_info(MODERN)
        result["_meta"] = meta
        return result

    def _cache_hints(self, call: Call, result: dict[str, Any]) -> dict[str, Any]:
        if call.modern:
            result["ttlMs"] = self.options.ttl_ms
            result["cacheScope"] = self.options.cache_scope
        return result

    async def _post_modern(
        self, incoming: Incoming, exchange: Exchange, stream: Stream
    ) -> Reply:
        try:
            return await self._serve_modern(incoming, exchange, stream)
        except RpcError as error:
            return self._modern_reply(incoming.id, error)

    async def _serve_modern(
        self, incoming: Incoming, exchange: Exchange, stream: Stream
    ) -> Reply:
        if incoming.kind == "response":
            raise _invalid_request(
                "Clients send no responses at 2026-07-28: nothing asked one."
            )
        if incoming.kind == "notification":
            return Reply(202)
        call = self._modern_call(incoming, exchange, stream)
        handler = self._modern_methods.get(incoming.method)
        if handler is None:
            raise RpcError(
                METHOD_NOT_FOUND,
                "Method not found",
                {"reason": "This method does not exist at 2026-07-28."},
            )
        result = await handler(call)
        return Reply(200, response(incoming.id, self._finish_modern(result)))

    def _modern_call(
        self, incoming: Incoming, exchange: Exchange, stream: Stream
    ) -> Call:
        meta = incoming.params.get("_meta")
        for field in (META_VERSION, META_CAPABILITIES):
            if not isinstance(meta, dict) or field not in meta:
                raise _invalid_params(f"params._meta must carry '{field}'.")
        assert isinstance(meta, dict)  # noqa: S101 - narrowed by the loop above
        version = meta[META_VERSION]
        capabilities = meta[META_CAPABILITIES]
        if not isinstance(version, str):
            raise _invalid_params(f"params._meta '{META_VERSION}' must be a string.")
        if not isinstance(capabilities, dict):
            raise _invalid_params(
                f"params._meta '{META_CAPABILITIES}' must be an object."
            )
        check_standard(exchange.headers, incoming.method, version, incoming.params)
        if version != MODERN or MODERN not in self.options.protocol_versions:
            raise RpcError(
                UNSUPPORTED_VERSION,
                "Unsupported protocol version",
                {
                    "supported": [MODERN]
                    if MODERN in self.options.protocol_versions
                    else [],
                    "requested": echo(version),
                },
            )
        level = meta.get(META_LOG_LEVEL)
        if level is not None and not is_level(level):
            raise _invalid_params(
                f"params._meta '{META_LOG_LEVEL}' is not a log level."
            )
        return Call(
            id=incoming.id,
            method=incoming.method,
            params=incoming.params,
            meta=meta,
            version=MODERN,
            headers=exchange.headers,
            stream=stream,
            principal=exchange.principal,
            capabilities=capabilities,
        )

    async def _post_session(
        self, incoming: Incoming, exchange: Exchange, stream: Stream
    ) -> Reply:
        try:
            return await self._serve_session(incoming, exchange, stream)
        except RpcError as error:
            return self._session_reply(incoming.id, error)

    async def _serve_session(
        self, incoming: Incoming, exchange: Exchange, stream: Stream
    ) -> Reply:
        headers = exchange.headers
        for name in ("Mcp-Session-Id", "MCP-Protocol-Version"):
            if len(headers.getall(name)) > 1:
                raise _invalid_request(
                    f"Duplicated {name} header. Send exactly one {name} header."
                )
        if incoming.kind == "request" and incoming.method == "initialize":
            return self._initialize(incoming, exchange)
        if incoming.kind == "request" and incoming.method == "ping":
            return Reply(200, response(incoming.id, {}))
        session = self._live_session(incoming, exchange)
        if isinstance(session, Reply):
            return session
        self._check_session_version(session, headers)
        if incoming.kind == "response":
            self._deliver(session, incoming)
            return Reply(202)
        if incoming.kind == "notification":
            self._session_notification(session, incoming)
            return Reply(202)
        return await self._session_request(session, incoming, exchange, stream)

    def _live_session(self, incoming: Incoming, exchange: Exchange) -> Session | Reply:
        sid = exchange.headers.get("Mcp-Session-Id")
        if sid is None:
            raise _invalid_request("Missing Mcp-Session-Id header. Initialize first.")
        session = self._store.get(sid.strip())
        if (
            session is not None
            and not session.closed
            and session.principal == exchange.principal
        ):
            return session
        if incoming.kind != "request":
            return Reply(404)
        return Reply(
            404,
            error_response(
                incoming.id, RpcError(SESSION_NOT_FOUND, "Session terminated")
            ),
        )

    @staticmethod
    def _check_session_version(session: Session, headers: Headers) -> None:
        if session.protocol_version == "2025-03-26":
            return
        sent = headers.get("MCP-Protocol-Version")
        if sent is not None and sent.strip() != session.protocol_version:
            raise _invalid_request(
                "Incorrect MCP-Protocol-Version header. Expected the version "
                "negotiated during initialize."
            )

    def _initialize(self, incoming: Incoming, exchange: Exchange) -> Reply:
        params = incoming.params
        offered = [v for v in self.options.protocol_versions if v in LEGACY]
        if not offered:
            raise RpcError(
                INVALID_REQUEST,
                "This server serves 2026-07-28 only; it needs no initialize.",
                {"supported": list(self.options.protocol_versions)},
                status=400,
            )
        requested = params.get("protocolVersion")
        version = requested if requested in offered else offered[0]
        capabilities = params.get("capabilities")
        client_info = params.get("clientInfo")
        session = Session(
            id=new_session_id(),
            protocol_version=version,
            client_capabilities=capabilities if isinstance(capabilities, dict) else {},
            client_info=client_info if isinstance(client_info, dict) else {},
            principal=exchange.principal,
        )
        if not self._store.add(session):
            return Reply(
                503,
                error_response(
                    incoming.id,
                    RpcError(
                        INTERNAL_ERROR,
                        "Too many live sessions. Retry later.",
                    ),
                ),
                {"Retry-After": str(self.options.retry_after)},
            )
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.capabilities(version),
            "serverInfo": self._server_info(version),
        }
        if self.options.instructions is not None:
            result["instructions"] = self.options.instructions
        return Reply(200, response(incoming.id, result), {"Mcp-Session-Id": session.id})

    @staticmethod
    def _deliver(session: Session, incoming: Incoming) -> None:
        if not isinstance(incoming.id, str):
            return
        future = session.pending.get(incoming.id)
        if future is None or future.done():
            return
        if incoming.error is not None:
            future.set_exception(
                ClientRequestError(
                    "client_error", "The client answered with an error.", incoming.error
                )
            )
        elif isinstance(incoming.result, dict):
            future.set_result(incoming.result)
        else:
            future.set_exception(
                ClientRequestError(
                    "client_error", "The client's result is not an object."
                )
            )

    @staticmethod
    def _session_notification(session: Session, incoming: Incoming) -> None:
        if incoming.method == "notifications/initialized":
            session.initialized = True
        elif incoming.method == "notifications/cancelled":
            rid = incoming.params.get("requestId")
            if isinstance(rid, str | int) and not isinstance(rid, bool):
                task = session.in_flight.get(rid)
                if task is not None and not task.done():
                    session.cancelled.add(rid)
                    task.cancel()

    async def _session_request(
        self,
        session: Session,
        incoming: Incoming,
        exchange: Exchange,
        stream: Stream,
    ) -> Reply:
        rid = incoming.id
        assert rid is not None  # noqa: S101 - a request always has an id
        if not session.initialized and incoming.method not in _BEFORE_INITIALIZED:
            raise _invalid_request(
                "Session not yet initialized. Send notifications/initialized first."
            )
        handler = self._session_methods.get(incoming.method)
        if handler is None:
            raise RpcError(
                METHOD_NOT_FOUND,
                "Method not found",
                {"reason": "This server has no such method."},
            )
        call = Call(
            id=rid,
            method=incoming.method,
            params=incoming.params,
            meta=incoming.meta,
            version=session.protocol_version,
            headers=exchange.headers,
            stream=stream,
            principal=exchange.principal,
            capabilities=session.client_capabilities,
            session=session,
        )
        task = asyncio.current_task()
        if task is not None:
            session.in_flight[rid] = task
        try:
            result = await handler(call)
        except asyncio.CancelledError:
            if task is not None and rid in session.cancelled:
                session.cancelled.discard(rid)
                task.uncancel()
                return Reply(204)
            raise
        finally:
            if task is not None and session.in_flight.get(rid) is task:
                del session.in_flight[rid]
        return Reply(200, response(rid, result))

    # ------------------------------------------------------------ GET/DELETE

    @staticmethod
    def _plain(
        status: int, message: str, headers: Mapping[str, str] | None = None
    ) -> Reply:
        return Reply(status, {"error": message}, dict(headers or {}))

    def _session_for(self, exchange: Exchange) -> Session | Reply:
        headers = exchange.headers
        for name in ("Mcp-Session-Id", "MCP-Protocol-Version"):
            if len(headers.getall(name)) > 1:
                return self._plain(
                    400, f"Duplicated {name} header. Send exactly one {name} header."
                )
        sent_version = headers.get("MCP-Protocol-Version")
        sid = headers.get("Mcp-Session-Id")
        if sid is None or (
            sent_version is not None and sent_version.strip() not in HANDSHAKE
        ):
            return self._plain(
                405,
                "Method not allowed: no session applies. POST to this endpoint.",
                {"Allow": "POST"},
            )
        session = self._store.get(sid.strip())
        if session is None or session.closed or session.principal != exchange.principal:
            return self._plain(404, "Session not found")
        if (
            session.protocol_version != "2025-03-26"
            and sent_version is not None
            and sent_version.strip() != session.protocol_version
        ):
            return self._plain(
                400,
                "Incorrect MCP-Protocol-Version header. Expected the version "
                "negotiated during initialize.",
            )
        return session

    async def get(self, exchange: Exchange, stream: Stream) -> Reply:
        """Serve a session's SSE stream.

        It lasts until the session ends or another GET replaces it.
        """
        found = self._session_for(exchange)
        if isinstance(found, Reply):
            return found
        session = found
        if session.stream_done is not None:
            session.stream_done.set()
        done = asyncio.Event()
        session.stream_done = done
        session.stream = stream
        try:
            await stream.open()
            await stream.send(None, event_id=session.next_event_id())
            for kind in sorted(session.dirty):
                await stream.send(
                    notification(f"notifications/{kind}/list_changed"),
                    event_id=session.next_event_id(),
                )
            await done.wait()
        finally:
            if session.stream is stream:
                session.stream = None
                session.stream_done = None
        return Reply(200, None)

    async def delete(self, exchange: Exchange) -> Reply:
        """End a session; later requests naming it get 404."""
        found = self._session_for(exchange)
        if isinstance(found, Reply):
            return found
        self._store.remove(found.id)
        found.close()
        return Reply(200, None)

    async def aclose(self) -> None:
        """End every session and stream."""
        for session in self._store.sessions():
            self._store.remove(session.id)
            session.close()

    # -------------------------------------------------------------- methods

    async def _ping(self, call: Call) -> dict[str, Any]:
        del call
        return {}

    async def _set_level(self, call: Call) -> dict[str, Any]:
        level = call.params.get("level")
        if not is_level(level):
            raise _invalid_params(
                "Invalid log level. Use one of debug, info, notice, warning, "
                "error, critical, alert, emergency."
            )
        assert call.session is not None  # noqa: S101 - a session method
        call.session.log_level = level
        return {}

    async def _discover(self, call: Call) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(self.options.protocol_versions),
            "capabilities": self.capabilities(MODERN),
        }
        if self.options.instructions is not None:
            result["instructions"] = self.options.instructions
        return self._cache_hints(call, result)

    async def _tools_list(self, call: Call) -> dict[str, Any]:
        definitions = self._tool_definitions(call.version)
        items, next_cursor = page(
            definitions,  # type: ignore[arg-type]
            call.params.get("cursor"),
            self.options.page_size,
        )
        result: dict[str, Any] = {"tools": items}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        if call.session is not None:
            call.session.dirty.discard("tools")
        return self._cache_hints(call, result)

    def _context(self, call: Call) -> ToolContext:
        session = call.session
        if call.modern:
            level = call.meta.get(META_LOG_LEVEL)
            log_enabled = level is not None
            threshold = level if isinstance(level, str) else None
        else:
            log_enabled = True
            threshold = session.log_level if session is not None else None
        return ToolContext(
            request_id=call.id,
            session_id=session.id if session is not None else None,
            protocol_version=call.version,
            meta=call.meta,
            principal=call.principal,
            client_capabilities=call.capabilities,
            stream=call.stream,
            log_enabled=log_enabled,
            log_threshold=threshold,
            asker=self._asker(call),
        )

    def _asker(
        self, call: Call
    ) -> Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]] | None:
        session = call.session
        if session is None or call.stream is None:
            return None
        stream = call.stream
        timeout = self.options.client_request_timeout

        async def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
            needed = {
                "elicitation/create": "elicitation",
                "sampling/createMessage": "sampling",
                "roots/list": "roots",
            }[method]
            if needed not in session.client_capabilities or (
                needed == "elicitation" and not has_titles(session.protocol_version)
            ):
                raise ClientRequestError(
                    "not_supported",
                    f"The client did not declare the '{needed}' capability.",
                )
            rid = f"srv-{secrets.token_urlsafe(8)}"
            future: asyncio.Future[dict[str, Any]] = (
                asyncio.get_running_loop().create_future()
            )
            session.pending[rid] = future
            try:
                message: dict[str, Any] = {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "method": method,
                }
                if params:
                    message["params"] = params
                try:
                    await stream.send(message)
                except Exception:  # noqa: BLE001 - the client went away
                    raise ClientRequestError(
                        "disconnected", "The client's stream is gone."
                    ) from None
                try:
                    return await asyncio.wait_for(future, timeout)
                except TimeoutError:
                    raise ClientRequestError(
                        "timeout", "The client did not answer in time."
                    ) from None
            finally:
                session.pending.pop(rid, None)

        return ask

    async def _tools_call(self, call: Call) -> dict[str, Any]:
        params = call.params
        name = params.get("name")
        if not isinstance(name, str):
            raise _invalid_params("Missing or invalid 'name' in params.")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise _invalid_params("Invalid 'arguments' in params: expected an object.")
        if name == HELP_NAME:
            if call.modern:
                check_params(call.headers, (), arguments)
            return self._help(call, arguments)
        spec = next((s for s in self._specs if s.name == name), None)
        if spec is None:
            raise unknown_tool(name, [*(s.name for s in self._specs), HELP_NAME])
        if call.modern:
            check_params(call.headers, spec.header_annotations, arguments)
        return await call_tool(
            spec,
            arguments,
            self._context(call),
            strict=self.options.strict,
            version=call.version,
        )

    def _help(self, call: Call, arguments: dict[str, Any]) -> dict[str, Any]:
        import json  # noqa: PLC0415 - only help renders here

        tool, action = help_arguments(arguments)
        ctx = self._context(call)

        def context_of(spec: ToolSpec, name: str) -> Any:
            context = spec.tool.action_context(name, ctx)
            if context is not None and not isinstance(context, Mapping):
                raise TypeError("action_context must return a mapping or None")
            return dict(context) if context is not None else None

        try:
            answer = answer_help(self._specs, tool, action, context_of)
        except Exception as error:  # noqa: BLE001 - a raising hook answers tool_raised
            spec = next(s for s in self._specs if s.name == tool)
            return raised(spec, action, error)
        text = json.dumps(answer.payload, ensure_ascii=False, separators=(",", ":"))
        content = gate_content(
            [Content({"type": "text", "text": text}).to_json()], call.version
        )
        return {"content": content, "isError": answer.is_error}
