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
from collections.abc import Iterable, Mapping
from typing import Any

from wymcp.core.schema import ToolSpec
from wymcp.core.server._asking import answer_asking, build_context
from wymcp.core.server._call import (
    Call,
    Handler,
    Kit,
    invalid_params,
    invalid_request,
)
from wymcp.core.server._catalogue import Catalogue
from wymcp.core.server._context import ToolContext
from wymcp.core.server._cursor import page
from wymcp.core.server._exchange import Exchange, Reply, Stream
from wymcp.core.server._help import HELP_NAME, answer_help, help_arguments
from wymcp.core.server._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SESSION_NOT_FOUND,
    Incoming,
    RpcError,
    classify,
    error_response,
    notification,
    request_id_of,
    response,
)
from wymcp.core.server._ladder import MODERN_STATUS, is_modern_request, modern_call
from wymcp.core.server._levels import is_level
from wymcp.core.server._lifecycle import (
    BEFORE_INITIALIZED,
    SESSION_STATUS,
    check_session_version,
    deliver,
    session_notification,
)
from wymcp.core.server._mirror import HeaderIndex, check_params, index_headers
from wymcp.core.server._options import EngineOptions
from wymcp.core.server._prompt_methods import PromptMethods
from wymcp.core.server._resource_methods import ResourceMethods
from wymcp.core.server._revision import (
    HANDSHAKE,
    LEGACY,
    META_SERVER_INFO,
    MODERN,
    has_titles,
    is_modern,
)
from wymcp.core.server._session import (
    DECLARATION_LIMIT,
    END,
    MemorySessionStore,
    Session,
    declaration_size,
    new_session_id,
    principal_key,
)
from wymcp.core.server._subscriptions import Subscriptions
from wymcp.core.server._toolcall import (
    call_tool,
    gate_content,
    raised,
    unknown_tool,
)

_log = logging.getLogger("wymcp.core.server")


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
        kit = Kit(
            catalogue=self._catalogue,
            context=self._context,
            page=self._page,
            cache_hints=self._cache_hints,
        )
        resource_methods = ResourceMethods(kit)
        prompt_methods = PromptMethods(kit)
        shared: dict[str, Handler] = {
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "resources/list": resource_methods.list,
            "resources/templates/list": resource_methods.templates,
            "resources/read": resource_methods.read,
            "prompts/list": prompt_methods.list,
            "prompts/get": prompt_methods.get,
            "completion/complete": prompt_methods.complete,
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
            "resources/subscribe": resource_methods.subscribe,
            "resources/unsubscribe": resource_methods.unsubscribe,
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
        if is_modern_request(incoming, index):
            return await self._post_modern(incoming, exchange, stream, index)
        return await self._post_session(incoming, exchange, stream, index)

    def _modern_reply(self, rid: str | int | None, error: RpcError) -> Reply:
        status = error.status or MODERN_STATUS.get(error.code, 200)
        return Reply(status, error_response(rid, error), dict(error.headers))

    def _session_reply(self, rid: str | int | None, error: RpcError) -> Reply:
        status = error.status or SESSION_STATUS.get(error.code, 200)
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
            raise invalid_request(
                "Clients send no responses at 2026-07-28: nothing asked one."
            )
        if incoming.kind == "notification":
            return Reply(202)
        call = modern_call(
            incoming, exchange, stream, index, self.options.protocol_versions
        )
        handler = self._modern_methods.get(incoming.method)
        if handler is None:
            raise RpcError(
                METHOD_NOT_FOUND,
                "Method not found",
                {"reason": "This method does not exist at 2026-07-28."},
            )
        result = await handler(call)
        return Reply(200, response(incoming.id, self._finish_modern(result)))

    async def _post_session(
        self,
        incoming: Incoming,
        exchange: Exchange,
        stream: Stream,
        index: HeaderIndex,
    ) -> Reply:
        try:
            return await self._serve_session(incoming, exchange, stream, index)
        except RpcError as error:
            return self._session_reply(incoming.id, error)

    async def _serve_session(
        self,
        incoming: Incoming,
        exchange: Exchange,
        stream: Stream,
        index: HeaderIndex,
    ) -> Reply:
        for name in ("Mcp-Session-Id", "MCP-Protocol-Version"):
            if len(index.get(name.lower(), ())) > 1:
                raise invalid_request(
                    f"Duplicated {name} header. Send exactly one {name} header."
                )
        if incoming.kind == "request" and incoming.method == "initialize":
            return self._initialize(incoming, exchange)
        if incoming.kind == "request" and incoming.method == "ping":
            return Reply(200, response(incoming.id, {}))
        session = self._live_session(incoming, exchange, index)
        if isinstance(session, Reply):
            return session
        check_session_version(session, index)
        if incoming.kind == "response":
            deliver(session, incoming)
            return Reply(202)
        if incoming.kind == "notification":
            session_notification(session, incoming)
            return Reply(202)
        return await self._session_request(session, incoming, exchange, stream)

    def _live_session(
        self, incoming: Incoming, exchange: Exchange, index: HeaderIndex
    ) -> Session | Reply:
        sids = index.get("mcp-session-id")
        sid = sids[0] if sids else None
        if sid is None:
            raise invalid_request("Missing Mcp-Session-Id header. Initialize first.")
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
        capabilities = capabilities if isinstance(capabilities, dict) else {}
        client_info = params.get("clientInfo")
        client_info = client_info if isinstance(client_info, dict) else {}
        if declaration_size(capabilities, client_info) > DECLARATION_LIMIT:
            raise RpcError(
                INVALID_PARAMS,
                "Invalid params",
                {
                    "reason": "'capabilities' and 'clientInfo' take more than "
                    f"{DECLARATION_LIMIT} bytes of JSON together; a session "
                    "keeps them, so send only the capabilities you have."
                },
                status=400,
            )
        session = Session(
            id=new_session_id(),
            protocol_version=version,
            client_capabilities=capabilities,
            client_info=client_info,
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

    async def _session_request(
        self,
        session: Session,
        incoming: Incoming,
        exchange: Exchange,
        stream: Stream,
    ) -> Reply:
        rid = incoming.id
        assert rid is not None  # noqa: S101 - a request always has an id
        if not session.initialized and incoming.method not in BEFORE_INITIALIZED:
            raise invalid_request(
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
            raise invalid_params(
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

    # ----------------------------------------------------------------- tools

    async def _tools_call(self, call: Call) -> dict[str, Any]:
        params = call.params
        name = params.get("name")
        if not isinstance(name, str):
            raise invalid_params("Missing or invalid 'name' in params.")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise invalid_params("Invalid 'arguments' in params: expected an object.")
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
        return await answer_asking(
            call_tool(
                spec,
                arguments,
                ctx,
                strict=self.options.strict,
                version=call.version,
                call_timeout=self.options.call_timeout,
            )
        )

    def _context(self, call: Call, target: str = "") -> ToolContext:
        return build_context(
            call,
            target,
            secret=self._secret,
            options=self.options,
            server=self,
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

    # ------------------------------------------------------------- subscribe

    async def _listen(self, call: Call) -> dict[str, Any]:
        assert call.id is not None  # noqa: S101 - a request
        honoured = Subscriptions.honoured(
            call.params.get("notifications"),
            has_prompts=self._catalogue.has_prompts,
            has_resources=self._catalogue.has_resources,
        )
        if call.stream is None:
            raise invalid_request("subscriptions/listen needs a stream.")
        if len(self._subscriptions) >= self.options.max_listeners:
            raise RpcError(
                INTERNAL_ERROR,
                "Too many open subscriptions. Retry later.",
                status=503,
                headers={"Retry-After": str(self.options.retry_after)},
            )
        return await self._subscriptions.listen(call.id, honoured, call.stream)
