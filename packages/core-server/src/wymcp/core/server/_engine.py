"""The engine: one HTTP exchange in, one reply out, for every revision.

It routes a message to the stateless 2026-07-28 path (the validation ladder
of mcp-server-requirements.md §1.5) or to the session path of the 2025
revisions, runs the method handler and shapes the answer.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from wymcp.core.gates import Verdict
from wymcp.core.schema import ToolSpec
from wymcp.core.server._asking import asking_result, build_context
from wymcp.core.server._authorization import refuse_call
from wymcp.core.server._call import (
    Call,
    Handler,
    Kit,
    invalid_params,
    invalid_request,
)
from wymcp.core.server._catalogue import Catalogue
from wymcp.core.server._context import MissingCapabilityError, ToolContext
from wymcp.core.server._cursor import page
from wymcp.core.server._deadlines import Deadlines
from wymcp.core.server._exchange import Exchange, Reply, Stream
from wymcp.core.server._help import (
    HELP_NAME,
    HelpAnswer,
    answer_help,
    help_arguments,
)
from wymcp.core.server._jsonrpc import (
    METHOD_NOT_FOUND,
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
from wymcp.core.server._mirror import HeaderIndex, check_params, index_headers
from wymcp.core.server._options import EngineOptions
from wymcp.core.server._prompt_methods import PromptMethods
from wymcp.core.server._resource_methods import ResourceMethods
from wymcp.core.server._revision import (
    META_SERVER_INFO,
    MODERN,
    has_titles,
    is_modern,
)
from wymcp.core.server._session import MemorySessionStore
from wymcp.core.server._session_path import SessionPath
from wymcp.core.server._state import StateKeys
from wymcp.core.server._stream_cap import LongStreams
from wymcp.core.server._subscriptions import Subscriptions
from wymcp.core.server._task_failure import TaskFailedError
from wymcp.core.server._task_methods import TaskMethods
from wymcp.core.server._task_store import MemoryTaskStore
from wymcp.core.server._tasks import EXTENSION, Tasks, client_has_tasks, missing_tasks
from wymcp.core.server._toolcall import (
    InputRequired,
    call_tool,
    gate_content,
    open_call,
    raised,
    unknown_tool,
)


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
        self.state: Any = None
        """What the LIFESPAN factory yielded: every call's `ctx.state`."""
        self.broadcast: Callable[[str, str], None] | None = None
        """Told ("list", kind) or ("updated", uri) after each change is
        delivered here, to hand it to the other workers (BROKER)."""
        opts = self.options
        self._subscriptions = Subscriptions()
        self._deadlines = Deadlines()
        self._streams = LongStreams(
            total=opts.max_streams,
            per_client=opts.max_streams_per_client,
            retry_after=opts.retry_after,
            wall_clock=opts.wall_clock,
        )
        self._catalogue = Catalogue(tools, resources, prompts, self._changed)
        self._store = opts.session_store or MemorySessionStore(
            idle_timeout=opts.session_idle_timeout,
            max_sessions=opts.max_sessions,
            clock=opts.clock,
        )
        self._tasks = Tasks(
            opts.task_store
            or MemoryTaskStore(
                max_tasks=opts.max_tasks,
                max_per_principal=opts.max_tasks_per_principal,
                clock=opts.clock,
            ),
            ttl=opts.task_ttl,
            poll_interval_ms=opts.task_poll_interval_ms,
            clock=opts.clock,
            wall_clock=opts.wall_clock,
            retry_after=opts.retry_after,
        )
        task_methods = TaskMethods(self._tasks)
        secret = opts.state_secret
        if secret is None:
            secret = secrets.token_bytes(32)
        self._state_keys = StateKeys(opts.state_secrets or (secret,))
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
            "tasks/get": task_methods.get,
            "tasks/update": task_methods.update,
            "tasks/cancel": task_methods.cancel,
        }
        self._session_path = SessionPath(
            store=self._store,
            options=opts,
            methods={
                **shared,
                "ping": self._ping,
                "logging/setLevel": self._set_level,
                "resources/subscribe": resource_methods.subscribe,
                "resources/unsubscribe": resource_methods.unsubscribe,
            },
            capabilities=self.capabilities,
            server_info=self._server_info,
        )

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
        if is_modern(version):
            caps["extensions"] = {EXTENSION: {}}
        return caps

    @property
    def tool_specs(self) -> tuple[ToolSpec, ...]:
        """The prepared tools, in `tools/list` order (help not included)."""
        return tuple(self._catalogue.tools)

    @property
    def resource_uris(self) -> tuple[str, ...]:
        """The URIs of the direct resources, in `resources/list` order."""
        return tuple(r.key for r in self._catalogue.resources if r.template is None)

    @property
    def resource_templates(self) -> tuple[str, ...]:
        """The URI templates, in `resources/templates/list` order."""
        return tuple(r.key for r in self._catalogue.resources if r.template)

    @property
    def prompt_names(self) -> tuple[str, ...]:
        """The prompt names, in `prompts/list` order."""
        return tuple(p.name for p in self._catalogue.prompts)

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
        self.deliver_updated(uri)
        if self.broadcast is not None:
            self.broadcast("updated", uri)

    def deliver_updated(self, uri: str) -> None:
        """Tell this worker's subscribed streams that `uri` changed."""
        self._subscriptions.updated(uri)
        message = notification("notifications/resources/updated", {"uri": uri})
        for session in self._store.sessions():
            if uri in session.subscriptions and session.outbox is not None:
                session.outbox.put(message, key=uri)

    def _changed(self, kind: str) -> None:
        self.deliver_changed(kind)
        if self.broadcast is not None:
            self.broadcast("list", kind)

    def deliver_changed(self, kind: str) -> None:
        """Tell this worker's streams that the `kind` list changed."""
        self._subscriptions.changed(kind)
        message = notification(f"notifications/{kind}/list_changed")
        for session in self._store.sessions():
            if kind in session.dirty:
                continue
            session.dirty.add(kind)
            if session.outbox is not None:
                session.outbox.put(message, key=("list", kind))

    # ------------------------------------------------------------------ POST

    async def post(self, exchange: Exchange, stream: Stream) -> Reply:
        """Answer one POSTed JSON-RPC message."""
        denied = refuse_call(exchange, self._catalogue.tool)
        if denied is not None:
            return denied
        body = exchange.body
        if isinstance(body, dict) and body.get("method") == "subscriptions/listen":
            return await self._streams.hold(exchange, stream, self._post)
        return await self._post(exchange, stream)

    async def _post(self, exchange: Exchange, stream: Stream) -> Reply:
        body = exchange.body
        try:
            incoming = classify(body)
        except RpcError as error:
            return Reply(400, error_response(request_id_of(body), error))
        index = index_headers(exchange.headers)
        if not is_modern_request(incoming, index):
            return await self._session_path.post(incoming, exchange, stream, index)
        try:
            return await self._serve_modern(incoming, exchange, stream, index)
        except RpcError as error:
            return self._modern_reply(incoming.id, error)

    def _modern_reply(self, rid: str | int | None, error: RpcError) -> Reply:
        status = error.status or MODERN_STATUS.get(error.code, 200)
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

    # ------------------------------------------------------------ GET/DELETE

    async def get(self, exchange: Exchange, stream: Stream) -> Reply:
        """Serve a session's SSE stream.

        It lasts until the session ends or another GET replaces it.
        """
        return await self._streams.hold(exchange, stream, self._session_path.get)

    async def delete(self, exchange: Exchange) -> Reply:
        """End a session; later requests naming it get 404."""
        return await self._session_path.delete(exchange)

    async def aclose(self) -> None:
        """End every session and stream; cancel stopped calls that still run."""
        self._subscriptions.close()
        self._deadlines.stop_all()
        await self._tasks.aclose()
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
            if call.modern and call.mirrored_headers:
                check_params(call.headers, (), arguments)
            return self._help(call, arguments)
        spec = self._catalogue.tool(name)
        if spec is None:
            raise unknown_tool(name, self._catalogue.tool_names())
        if call.modern and call.mirrored_headers:
            check_params(call.headers, spec.header_annotations, arguments)
        opened = await self._as_task(call, spec, arguments) if call.modern else None
        ctx = self._context(call, f"tools/call:{name}")
        try:
            return await self._run_tool(call, spec, arguments, ctx, opened=opened)
        except (InputRequired, MissingCapabilityError) as asked:
            return asking_result(asked)
        except TaskFailedError as failed:
            raise failed.rpc_error() from None

    async def _run_tool(
        self,
        call: Call,
        spec: ToolSpec,
        arguments: dict[str, Any],
        ctx: ToolContext,
        *,
        opened: tuple[str | None, Verdict] | None,
    ) -> dict[str, Any]:
        as_task = opened is not None  # a task's arguments passed the gates already

        def work() -> Awaitable[dict[str, Any]]:
            return call_tool(
                spec,
                arguments,
                ctx,
                strict=self.options.strict,
                version=call.version,
                deadlines=self._deadlines,
                # A task is bound by its TTL, not by the request's CALL_TIMEOUT.
                call_timeout=None if as_task else self.options.call_timeout,
                result_limit=self.options.result_limit,
                expose_messages=self.options.expose_exception_messages,
                opened=opened,
            )

        if not as_task:
            return await work()
        return await self._tasks.call(
            work,
            ctx,
            principal=call.principal,
            capabilities=call.capabilities,
            prelude=bool(getattr(spec.tool, "task_prelude", False)),
        )

    async def _as_task(
        self, call: Call, spec: ToolSpec, arguments: dict[str, Any]
    ) -> tuple[str | None, Verdict] | None:
        """The gates' accepted verdict when this call runs as a task, else None.

        -32021 when it must and cannot. A call the gates refuse is answered at
        once, never as a task.
        """
        action = arguments.get("action") if spec.plain is None else None
        support = spec.task_support_for(action if isinstance(action, str) else None)
        if support == "forbidden":
            return None
        if not client_has_tasks(call.capabilities):
            if support == "required":
                raise missing_tasks()
            return None
        opened = await open_call(spec, arguments, strict=self.options.strict)
        return None if isinstance(opened, dict) else opened

    def _context(self, call: Call, target: str = "") -> ToolContext:
        ctx = build_context(
            call,
            target,
            keys=self._state_keys,
            options=self.options,
            server=self,
        )
        ctx.state = self.state
        return ctx

    def _help(self, call: Call, arguments: dict[str, Any]) -> dict[str, Any]:
        asked = help_arguments(arguments)
        if isinstance(asked, dict):
            return self._help_result(call, HelpAnswer(asked, is_error=True))
        tool, action = asked
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
            return raised(
                spec, action, error, expose=self.options.expose_exception_messages
            )
        return self._help_result(call, answer)

    def _help_result(self, call: Call, answer: HelpAnswer) -> dict[str, Any]:
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
            serves=lambda uri: self._catalogue.resource_for(uri) is not None,
        )
        if call.stream is None:
            raise invalid_request("subscriptions/listen needs a stream.")
        return await self._subscriptions.listen(call.id, honoured, call.stream)
