"""The engine: one HTTP exchange in, one reply out, for every revision.

It routes a message to the stateless 2026-07-28 path (the validation ladder
of mcp-server-requirements.md §1.5) or to the session path of the 2025
revisions, runs the method handler and shapes the answer.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import attrs

from wymcp.core.gates import check
from wymcp.core.schema import ToolSpec
from wymcp.core.server._asking import modern_asker, session_asker
from wymcp.core.server._catalogue import Catalogue
from wymcp.core.server._context import (
    Asker,
    ClientRequestError,
    MissingCapabilityError,
    ToolContext,
)
from wymcp.core.server._cursor import page
from wymcp.core.server._exchange import Exchange, Headers, Reply, Stream
from wymcp.core.server._help import HELP_NAME, answer_help, help_arguments
from wymcp.core.server._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    RESOURCE_NOT_FOUND,
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
from wymcp.core.server._mirror import (
    HeaderIndex,
    check_params,
    check_standard,
    index_headers,
)
from wymcp.core.server._options import EngineOptions
from wymcp.core.server._prompt import prompt_result
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
from wymcp.core.server._session import (
    END,
    MemorySessionStore,
    Session,
    new_session_id,
    principal_key,
)
from wymcp.core.server._state import StateError, seal, unseal
from wymcp.core.server._subscriptions import MAX_URIS, Subscriptions
from wymcp.core.server._toolcall import (
    InputRequired,
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
    headers: HeaderIndex
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
        self._subscriptions = Subscriptions()
        self._catalogue = Catalogue(tools, resources, prompts, self._changed)
        self._store = opts.session_store or MemorySessionStore(
            idle_timeout=opts.session_idle_timeout,
            max_sessions=opts.max_sessions,
            clock=opts.clock,
        )
        secret = opts.state_secret
        if secret is None:
            secret = secrets.token_bytes(32)
        self._secret = secret.encode() if isinstance(secret, str) else secret
        shared: dict[str, Handler] = {
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "resources/list": self._resources_list,
            "resources/templates/list": self._templates_list,
            "resources/read": self._resources_read,
            "prompts/list": self._prompts_list,
            "prompts/get": self._prompts_get,
            "completion/complete": self._complete,
        }
        self._modern_methods: dict[str, Handler] = {
            **shared,
            "server/discover": self._discover,
            "subscriptions/listen": self._listen,
        }
        self._session_methods: dict[str, Handler] = {
            **shared,
            "ping": self._ping,
            "logging/setLevel": self._set_level,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
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
        catalogue = self._catalogue
        caps: dict[str, Any] = {"tools": {"listChanged": True}, "logging": {}}
        if catalogue.has_prompts:
            caps["prompts"] = {"listChanged": True}
        if catalogue.has_resources:
            caps["resources"] = {"listChanged": True}
            if not is_modern(version):
                caps["resources"]["subscribe"] = True
        if catalogue.has_prompts or catalogue.has_resources:
            caps["completions"] = {}
        return caps

    @property
    def tool_specs(self) -> tuple[ToolSpec, ...]:
        """The prepared tools, in `tools/list` order (help not included)."""
        return tuple(self._catalogue.tools)

    # ------------------------------------------------------- runtime changes

    def add_tool(self, tool: object) -> None:
        """Serve one more tool; clients that listen hear the list changed."""
        self._catalogue.add_tool(tool)

    def remove_tool(self, name: str) -> bool:
        """Stop serving a tool; False when there was none by that name."""
        return self._catalogue.remove_tool(name)

    def add_resource(self, resource: object) -> None:
        """Serve one more resource or template."""
        self._catalogue.add_resource(resource)

    def remove_resource(self, key: str) -> bool:
        """Stop serving the resource with this URI, template or name."""
        return self._catalogue.remove_resource(key)

    def add_prompt(self, prompt: object) -> None:
        """Serve one more prompt."""
        self._catalogue.add_prompt(prompt)

    def remove_prompt(self, name: str) -> bool:
        """Stop serving a prompt."""
        return self._catalogue.remove_prompt(name)

    def resource_updated(self, uri: str) -> None:
        """Tell subscribed clients that the resource at `uri` changed."""
        self._subscriptions.updated(uri)
        message = notification("notifications/resources/updated", {"uri": uri})
        for session in self._store.sessions():
            if uri in session.subscriptions and session.outbox is not None:
                session.outbox.put_nowait(message)

    def _changed(self, kind: str) -> None:
        self._subscriptions.changed(kind)
        message = notification(f"notifications/{kind}/list_changed")
        for session in self._store.sessions():
            if kind in session.dirty:
                continue
            session.dirty.add(kind)
            if session.outbox is not None:
                session.outbox.put_nowait(message)

    # ------------------------------------------------------------------ POST

    async def post(self, exchange: Exchange, stream: Stream) -> Reply:
        """Answer one POSTed JSON-RPC message."""
        body = exchange.body
        try:
            incoming = classify(body)
        except RpcError as error:
            return Reply(400, error_response(request_id_of(body), error))
        index = index_headers(exchange.headers)
        if self._is_modern(incoming, index):
            return await self._post_modern(incoming, exchange, stream, index)
        return await self._post_session(incoming, exchange, stream)

    @staticmethod
    def _is_modern(incoming: Incoming, headers: HeaderIndex) -> bool:
        meta = incoming.meta
        if META_VERSION in meta or META_CAPABILITIES in meta:
            return True
        versions = headers.get("mcp-protocol-version")
        if not versions:
            return False
        return versions[0].strip() not in HANDSHAKE

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
        self,
        incoming: Incoming,
        exchange: Exchange,
        stream: Stream,
        index: HeaderIndex,
    ) -> Reply:
        try:
            return await self._serve_modern(incoming, exchange, stream, index)
        except RpcError as error:
            return self._modern_reply(incoming.id, error)

    async def _serve_modern(
        self,
        incoming: Incoming,
        exchange: Exchange,
        stream: Stream,
        index: HeaderIndex,
    ) -> Reply:
        if incoming.kind == "response":
            raise _invalid_request(
                "Clients send no responses at 2026-07-28: nothing asked one."
            )
        if incoming.kind == "notification":
            return Reply(202)
        call = self._modern_call(incoming, exchange, stream, index)
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
        self,
        incoming: Incoming,
        exchange: Exchange,
        stream: Stream,
        index: HeaderIndex,
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
        check_standard(index, incoming.method, version, incoming.params)
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
            headers=index,
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
            and principal_key(session.principal) == principal_key(exchange.principal)
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
            headers={},
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
        if task is not None and rid in session.cancelled:
            # the tool swallowed the cancellation: withdraw the request for it
            session.cancelled.discard(rid)
            task.uncancel()
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
        if (
            session is None
            or session.closed
            or principal_key(session.principal) != principal_key(exchange.principal)
        ):
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
        if session.outbox is not None:
            session.outbox.put_nowait(END)
        outbox: asyncio.Queue[Any] = asyncio.Queue()
        for kind in sorted(session.dirty):
            outbox.put_nowait(notification(f"notifications/{kind}/list_changed"))
        session.outbox = outbox
        session.stream = stream
        try:
            await stream.open()
            await stream.send(None, event_id=session.next_event_id())
            while (message := await outbox.get()) is not END:
                await stream.send(message, event_id=session.next_event_id())
        except Exception:  # noqa: BLE001 - a gone client ends its stream
            _log.debug("a session stream ended: the client is gone")
        finally:
            if session.outbox is outbox:
                session.stream = None
                session.outbox = None
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
        self._subscriptions.close()
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

    def _page(self, call: Call, items: list[Any], key: str) -> dict[str, Any]:
        shown, next_cursor = page(
            items, call.params.get("cursor"), self.options.page_size
        )
        result: dict[str, Any] = {key: shown}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return self._cache_hints(call, result)

    async def _tools_list(self, call: Call) -> dict[str, Any]:
        result = self._page(
            call, self._catalogue.tool_definitions(call.version), "tools"
        )
        if call.session is not None:
            call.session.dirty.discard("tools")
        return result

    # ---------------------------------------------------------------- asking

    def _round(self, call: Call, target: str) -> tuple[Any, Mapping[str, Any]]:
        """The verified state and the responses of a 2026 retry."""
        if not call.modern:
            return None, {}
        responses = call.params.get("inputResponses")
        if responses is None:
            responses = {}
        if not isinstance(responses, dict):
            raise _invalid_params("inputResponses must be an object.")
        token = call.params.get("requestState")
        if token is None:
            return None, responses
        try:
            state = unseal(
                self._secret,
                token,
                target=target,
                principal=call.principal,
                now=self.options.wall_clock(),
            )
        except StateError:
            raise _invalid_params(
                "Invalid requestState: it is malformed, altered, meant for "
                "another request, or expired. Start the request again."
            ) from None
        return state, responses

    def _context(self, call: Call, target: str = "") -> ToolContext:
        session = call.session
        state, responses = self._round(call, target)
        asker: Asker | None = None
        if call.modern:
            level = call.meta.get(META_LOG_LEVEL)
            log_enabled = level is not None
            threshold = level if isinstance(level, str) else None
            principal = call.principal
            expires = self.options.wall_clock() + self.options.state_ttl

            def sealer(value: Any) -> str:
                return seal(
                    self._secret,
                    value,
                    target=target,
                    principal=principal,
                    expires=expires,
                )

            asker = modern_asker(call.capabilities, responses, sealer)
        else:
            log_enabled = True
            threshold = session.log_level if session is not None else None
            if session is not None and call.stream is not None:
                asker = session_asker(
                    session, call.stream, self.options.client_request_timeout
                )
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
            asker=asker,
            state=state,
            server=self,
        )

    @staticmethod
    async def _asking(run: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        """Run a handler that may ask the client: input_required or -32021."""
        try:
            return await run
        except InputRequired as asked:
            return asked.result
        except MissingCapabilityError as missing:
            raise RpcError(
                MISSING_CAPABILITY,
                "Missing required client capability",
                {"requiredCapabilities": missing.required},
            ) from None

    # ----------------------------------------------------------------- tools

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
        spec = self._catalogue.tool(name)
        if spec is None:
            raise unknown_tool(name, self._catalogue.tool_names())
        if call.modern:
            check_params(call.headers, spec.header_annotations, arguments)
        ctx = self._context(call, f"tools/call:{name}")
        return await self._asking(
            call_tool(
                spec,
                arguments,
                ctx,
                strict=self.options.strict,
                version=call.version,
            )
        )

    def _help(self, call: Call, arguments: dict[str, Any]) -> dict[str, Any]:
        tool, action = help_arguments(arguments)
        ctx = self._context(call)
        specs = self._catalogue.tools

        def context_of(spec: ToolSpec, name: str) -> Any:
            context = spec.tool.action_context(name, ctx)
            if context is not None and not isinstance(context, Mapping):
                raise TypeError("action_context must return a mapping or None")
            return dict(context) if context is not None else None

        try:
            answer = answer_help(specs, tool, action, context_of)
        except Exception as error:  # noqa: BLE001 - a raising hook answers tool_raised
            spec = next(s for s in specs if s.name == tool)
            return raised(spec, action, error)
        text = json.dumps(answer.payload, ensure_ascii=False, separators=(",", ":"))
        return {
            "content": gate_content([{"type": "text", "text": text}], call.version),
            "isError": answer.is_error,
        }

    # ------------------------------------------------------------- resources

    def _need(self, call: Call, available: bool) -> None:  # noqa: FBT001
        if not available:
            raise RpcError(
                METHOD_NOT_FOUND,
                "Method not found",
                {"reason": f"This server has no {call.method.split('/')[0]}."},
            )

    async def _resources_list(self, call: Call) -> dict[str, Any]:
        self._need(call, self._catalogue.has_resources)
        items = self._catalogue.resource_definitions(call.version, templates=False)
        if call.session is not None:
            call.session.dirty.discard("resources")
        return self._page(call, items, "resources")

    async def _templates_list(self, call: Call) -> dict[str, Any]:
        self._need(call, self._catalogue.has_resources)
        items = self._catalogue.resource_definitions(call.version, templates=True)
        return self._page(call, items, "resourceTemplates")

    def _uri(self, call: Call) -> str:
        uri = call.params.get("uri")
        if not isinstance(uri, str):
            raise _invalid_params("Missing or invalid 'uri' in params.")
        return uri

    async def _resources_read(self, call: Call) -> dict[str, Any]:
        self._need(call, self._catalogue.has_resources)
        uri = self._uri(call)
        found = self._catalogue.resource_for(uri)
        if found is None:
            code = INVALID_PARAMS if call.modern else RESOURCE_NOT_FOUND
            raise RpcError(code, "Resource not found", {"uri": echo(uri)})
        spec, values = found
        ctx = self._context(call, f"resources/read:{uri}")

        async def read() -> dict[str, Any]:
            try:
                value = await spec.resource.read(uri, values, ctx)
                return {"contents": spec.contents(uri, value)}
            except (InputRequired, MissingCapabilityError):
                raise
            except Exception:  # noqa: BLE001 - a raising read answers -32603
                _log.exception("resource %s raised", spec.name)
                raise RpcError(
                    INTERNAL_ERROR,
                    "Internal error",
                    {"reason": "The resource could not be read.", "uri": echo(uri)},
                ) from None

        result = await self._asking(read())
        if result.get("resultType") == "input_required":
            return result
        return self._cache_hints(call, result)

    def _session_of(self, call: Call) -> Session:
        assert call.session is not None  # noqa: S101 - a session method
        return call.session

    async def _subscribe(self, call: Call) -> dict[str, Any]:
        self._need(call, self._catalogue.has_resources)
        subscriptions = self._session_of(call).subscriptions
        uri = self._uri(call)
        if uri not in subscriptions and len(subscriptions) >= MAX_URIS:
            raise _invalid_params(
                f"A session may watch at most {MAX_URIS} resources. Unsubscribe first."
            )
        subscriptions.add(uri)
        return {}

    async def _unsubscribe(self, call: Call) -> dict[str, Any]:
        self._need(call, self._catalogue.has_resources)
        self._session_of(call).subscriptions.discard(self._uri(call))
        return {}

    # --------------------------------------------------------------- prompts

    async def _prompts_list(self, call: Call) -> dict[str, Any]:
        self._need(call, self._catalogue.has_prompts)
        items = self._catalogue.prompt_definitions(call.version)
        if call.session is not None:
            call.session.dirty.discard("prompts")
        return self._page(call, items, "prompts")

    async def _prompts_get(self, call: Call) -> dict[str, Any]:
        self._need(call, self._catalogue.has_prompts)
        name = call.params.get("name")
        if not isinstance(name, str):
            raise _invalid_params("Missing or invalid 'name' in params.")
        spec = self._catalogue.prompt(name)
        if spec is None:
            names = ", ".join(p.name for p in self._catalogue.prompts)
            raise _invalid_params(f"Unknown prompt. Valid prompts: {names}.")
        arguments = call.params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise _invalid_params("Invalid 'arguments' in params: expected an object.")
        verdict = check(spec.gate.tool, None, arguments, strict=True)
        if not verdict.accepted:
            refusal = dict(verdict.refusal or {})
            refusal.pop("help", None)
            refusal.pop("tool", None)
            refusal.pop("action", None)
            refusal["prompt"] = spec.name
            raise RpcError(
                INVALID_PARAMS,
                str(refusal.get("message") or "Invalid prompt arguments"),
                refusal,
            )
        ctx = self._context(call, f"prompts/get:{name}")

        async def render() -> dict[str, Any]:
            try:
                value = await spec.prompt.render(dict(verdict.data or {}), ctx)
                return prompt_result(spec, value)
            except (InputRequired, MissingCapabilityError):
                raise
            except Exception:  # noqa: BLE001 - a raising render answers -32603
                _log.exception("prompt %s raised", spec.name)
                raise RpcError(
                    INTERNAL_ERROR,
                    "Internal error",
                    {"reason": "The prompt could not be rendered."},
                ) from None

        return await self._asking(render())

    # ------------------------------------------------------------ completion

    async def _complete(self, call: Call) -> dict[str, Any]:
        catalogue = self._catalogue
        self._need(call, catalogue.has_prompts or catalogue.has_resources)
        ref = call.params.get("ref")
        argument = call.params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise _invalid_params("completion/complete needs 'ref' and 'argument'.")
        name, value = argument.get("name"), argument.get("value")
        if not isinstance(name, str) or not isinstance(value, str):
            raise _invalid_params("argument needs a string 'name' and 'value'.")
        context = call.params.get("context")
        given = context.get("arguments") if isinstance(context, dict) else None
        known = (
            {k: v for k, v in (given or {}).items() if isinstance(v, str)}
            if isinstance(given, dict)
            else {}
        )
        target: Any
        if ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
            target = catalogue.prompt(ref["name"])
            target = target.prompt if target is not None else None
        elif ref.get("type") == "ref/resource" and isinstance(ref.get("uri"), str):
            found = catalogue.template(ref["uri"])
            target = found.resource if found is not None else None
        else:
            raise _invalid_params("ref must be a ref/prompt or ref/resource.")
        if target is None:
            raise _invalid_params("Unknown prompt or resource template.")
        values = [v for v in target.complete(name, value, known) if isinstance(v, str)]
        completion: dict[str, Any] = {"values": values[:100], "total": len(values)}
        completion["hasMore"] = len(values) > 100  # noqa: PLR2004 - the spec's cap
        return {"completion": completion}

    # ------------------------------------------------------------- subscribe

    async def _listen(self, call: Call) -> dict[str, Any]:
        assert call.id is not None  # noqa: S101 - a request
        honoured = Subscriptions.honoured(
            call.params.get("notifications"),
            has_prompts=self._catalogue.has_prompts,
            has_resources=self._catalogue.has_resources,
        )
        if call.stream is None:
            raise _invalid_request("subscriptions/listen needs a stream.")
        if len(self._subscriptions) >= self.options.max_listeners:
            raise RpcError(
                INTERNAL_ERROR,
                "Too many open subscriptions. Retry later.",
                status=503,
                headers={"Retry-After": str(self.options.retry_after)},
            )
        return await self._subscriptions.listen(call.id, honoured, call.stream)
