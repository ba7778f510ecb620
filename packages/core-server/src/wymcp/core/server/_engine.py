"""The engine: one HTTP exchange in, one reply out, for every revision.

It routes a message to the stateless 2026-07-28 ladder (docs/protocol.md,
"2026-07-28") or to the session path of the 2025 revisions; either opens a `Call` at
its `Revision`, and one method table and one call path serve it.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import (
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Mapping,
    Sequence,
)
from functools import partial
from typing import TYPE_CHECKING, Any

import attrs

from wymcp.core.schema import RESERVED_NAME, ToolSpec
from wymcp.core.server._asking import Contexts
from wymcp.core.server._authorization import refuse_call
from wymcp.core.server._call import Call, Handler
from wymcp.core.server._call_deadlines import Deadlines
from wymcp.core.server._call_detached import DetachedCalls
from wymcp.core.server._catalogue import Catalogue
from wymcp.core.server._exchange import Exchange, Reply, Stream
from wymcp.core.server._jsonrpc import (
    INVALID_REQUEST,
    RpcError,
    classify,
    invalid_request,
    notification,
    request_id_of,
    rpc_error_message,
)
from wymcp.core.server._listing import Listing
from wymcp.core.server._local_rates import LocalRates
from wymcp.core.server._middleware import (
    CallRecord,
    CallRefused,
    Middleware,
    Result,
    note_failure,
    observed,
    rpc_outcome,
)
from wymcp.core.server._options import EngineOptions
from wymcp.core.server._prompt_methods import PromptMethods
from wymcp.core.server._rate_limits import RateLimiter
from wymcp.core.server._resource_methods import ResourceMethods
from wymcp.core.server._revision import SESSIONS, STATELESS, Revision, revision
from wymcp.core.server._session import MemorySessionStore, Session
from wymcp.core.server._session_lifecycle import ping, run_in_session, set_level
from wymcp.core.server._session_path import SessionPath
from wymcp.core.server._stateless_ladder import open_stateless, takes_stateless_path
from wymcp.core.server._stateless_request_state import StateKeys
from wymcp.core.server._stream_cap import LongStreams
from wymcp.core.server._stream_resumable import run_resumable
from wymcp.core.server._subscriptions import Subscriptions
from wymcp.core.server._task_methods import TaskMethods
from wymcp.core.server._task_store import MemoryTaskStore
from wymcp.core.server._tasks import EXTENSION, Tasks
from wymcp.core.server._tool_methods import ToolMethods

if TYPE_CHECKING:
    from wymcp.core.server._tracing import Tracing


@attrs.frozen
class LiveCounts:
    """What an engine holds at one moment (`Engine.live`)."""

    sessions: int
    streams: int
    tasks: Mapping[str, int]


class Engine:
    """The MCP engine every transport drives: asyncio, no sockets, HTTP's model.

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
        """What the LIFESPAN factory yielded, every call's `ctx.state`."""
        self.broadcast: Callable[[str, str], None] | None = None
        """Told ("list", kind) or ("updated", uri) after each change is
        delivered here, to hand it to the other workers (BROKER)."""
        opts = self.options
        self._subscriptions = Subscriptions()
        self._deadlines = Deadlines()
        self._detached = DetachedCalls()
        self._streams = LongStreams(
            total=opts.max_streams,
            per_client=opts.max_streams_per_client,
            retry_after=opts.retry_after,
            wall_clock=opts.wall_clock,
        )
        self._catalogue = Catalogue(
            tools, resources, prompts, self._changed, full=opts.publish_schema == "full"
        )
        self._store = opts.session_store or MemorySessionStore(
            idle_timeout=opts.session_idle_timeout,
            max_sessions=opts.max_sessions,
            clock=opts.clock,
        )
        task_store = opts.task_store
        if task_store is None:  # not `or`: an empty store is falsy (`__len__`)
            task_store = MemoryTaskStore(
                max_tasks=opts.max_tasks,
                max_per_principal=opts.max_tasks_per_principal,
                memory=opts.task_memory_budget,
                memory_per_principal=opts.task_memory_budget_per_principal,
                clock=opts.clock,
            )
        self._tasks = Tasks(
            task_store,
            ttl=opts.task_ttl,
            poll_interval_ms=opts.task_poll_interval_ms,
            clock=opts.clock,
            wall_clock=opts.wall_clock,
            retry_after=opts.retry_after,
        )
        secret = opts.state_secret
        if secret is None:
            secret = secrets.token_bytes(32)
        contexts = Contexts(
            keys=StateKeys(opts.state_secrets or (secret,)),
            options=opts,
            server=self,
        )
        listing = Listing(opts)
        self._listing = listing
        tool_methods = ToolMethods(
            catalogue=self._catalogue,
            contexts=contexts,
            listing=listing,
            options=opts,
            deadlines=self._deadlines,
            tasks=self._tasks,
        )
        resource_methods = ResourceMethods(self._catalogue, contexts, listing)
        prompt_methods = PromptMethods(self._catalogue, contexts, listing)
        task_methods = TaskMethods(self._tasks)
        self._methods: dict[str, Handler] = {
            "tools/list": tool_methods.list,
            "tools/call": tool_methods.call,
            "resources/list": resource_methods.list,
            "resources/templates/list": resource_methods.templates,
            "resources/read": resource_methods.read,
            "resources/subscribe": resource_methods.subscribe,
            "resources/unsubscribe": resource_methods.unsubscribe,
            "prompts/list": prompt_methods.list,
            "prompts/get": prompt_methods.get,
            "completion/complete": prompt_methods.complete,
            "server/discover": self._discover,
            "subscriptions/listen": self._listen,
            "tasks/get": task_methods.get,
            "tasks/update": task_methods.update,
            "tasks/cancel": task_methods.cancel,
            "ping": ping,
            "logging/setLevel": set_level,
        }
        """Every method of every revision; each `Revision` says which it serves."""
        self._middleware = opts.middleware + _rate_limiter(opts)
        """The MIDDLEWARE chain, outermost first (empty: no record, no extra await)."""
        self._tracing = self._make_tracing() if opts.tracing else None
        """The spans of each request (TRACING); None: OpenTelemetry never imported."""
        self._records = bool(self._middleware) or self._tracing is not None
        """Whether the engine makes a `CallRecord` of each request itself."""
        self._stateless_info = self._server_info(STATELESS.name)
        """The serverInfo every stateless result carries (read, never changed)."""
        self.session_ended: Callable[[str, float], None] | None = None
        """Told (revision, seconds) when a session this engine opened ends."""
        self._session_path = SessionPath(
            store=self._store,
            options=opts,
            capabilities=self.capabilities,
            server_info=self._server_info,
            ended=self._session_ended,
        )

    def _session_ended(self, session: Session) -> None:
        told = self.session_ended
        if told is not None and session.started is not None:
            told(session.protocol_version, self.options.clock() - session.started)

    # ------------------------------------------------------------------ info

    def _server_info(self, version: str) -> dict[str, Any]:
        info: dict[str, Any] = {
            "name": self.options.server_name,
            "version": self.options.server_version,
        }
        if self.options.server_title is not None and revision(version).titles:
            info["title"] = self.options.server_title
        return info

    def capabilities(self, version: str) -> dict[str, Any]:
        """The server capabilities announced at `version`."""
        stateless = revision(version).stateless
        catalogue = self._catalogue
        caps: dict[str, Any] = {"tools": {"listChanged": True}, "logging": {}}
        if catalogue.has_prompts:
            caps["prompts"] = {"listChanged": True}
        if catalogue.has_resources:
            caps["resources"] = {"listChanged": True}
            if not stateless:
                caps["resources"]["subscribe"] = True
        if catalogue.has_prompts or catalogue.has_resources:
            caps["completions"] = {}
        if stateless:
            caps["extensions"] = {EXTENSION: {}}
        return caps

    def published_tools(self, version: str) -> list[dict[str, Any]]:
        """The `tools/list` entries a client of `version` is given, help last."""
        return self._catalogue.tool_definitions(revision(version))

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

    def live(self) -> LiveCounts:
        """What this engine holds now: sessions, long-lived streams, tasks by state.

        Tasks are counted when they are kept in this process (`MemoryTaskStore`).
        """
        tasks: dict[str, int] = {}
        store = self._tasks.store
        if isinstance(store, MemoryTaskStore):
            for task in store.records():
                tasks[task.status] = tasks.get(task.status, 0) + 1
        return LiveCounts(
            sessions=len(self._store.sessions()),
            streams=self._streams.cap.open,
            tasks=tasks,
        )

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

    def post(self, exchange: Exchange, stream: Stream) -> Coroutine[Any, Any, Reply]:
        """Answer one POSTed JSON-RPC message (await the coroutine returned).

        The stateless ladder or the session path opens the `Call` (or answers
        alone); its revision says whether it serves the method (else -32601
        with the revision's text) and how an `RpcError` becomes a reply. The
        handler comes from the one method table; a session's call runs as one
        the session can cancel. Per-tool scopes are checked first, and a
        `subscriptions/listen` counts as a long-lived stream.
        """
        if exchange.challenge is not None:
            denied = refuse_call(exchange, self._catalogue.tool)
            if denied is not None:
                return _answered(denied)
        body = exchange.body
        if isinstance(body, dict) and body.get("method") == "subscriptions/listen":
            return self._streams.hold(exchange, stream, self._post)
        return self._post(exchange, stream)

    async def _post(self, exchange: Exchange, stream: Stream) -> Reply:
        body = exchange.body
        record = exchange.record
        if record is None and self._records:
            record = CallRecord()
        try:
            incoming = classify(body)
        except RpcError as error:
            _failed(record, error)
            return Reply(400, rpc_error_message(request_id_of(body), error))
        if record is not None:
            record.method, record.id = incoming.method, incoming.id
        revision: Revision = SESSIONS
        try:
            if takes_stateless_path(incoming, exchange.headers.index):
                revision = STATELESS
                opened = open_stateless(
                    incoming, exchange, stream, self.options.protocol_versions
                )
            else:
                opened = self._session_path.open(incoming, exchange, stream)
            if isinstance(opened, Reply):
                return opened
            call = opened
            revision = call.revision
            handler = self._handler(call, record)
            session = call.session
            if session is not None:
                return await run_resumable(
                    call.stream,
                    lambda: run_in_session(session, handler, call),
                    self._detached,
                )
            try:
                result = await handler(call)
            except BaseException as error:
                note_failure(record, error)  # `_observed` may leave it to here
                raise
            if revision.stateless:
                result = revision.finish(result, self._stateless_info)
            # `response`'s message, written here: one call less per request
            return Reply(200, {"jsonrpc": "2.0", "id": call.id, "result": result})
        except RpcError as error:
            _failed(record, error)
            return revision.reply(incoming.id, error)

    def _handler(self, call: Call, record: CallRecord | None) -> Handler:
        """The method's handler (-32601 if the revision lacks it), observed or not."""
        revision = call.revision
        if record is not None:
            record.revision = call.version
        if call.method not in revision.methods:
            raise revision.method_not_found()
        handler = self._methods[call.method]
        return handler if record is None else self._observed(record, call, handler)

    def _observed(self, record: CallRecord, call: Call, handler: Handler) -> Handler:
        """`handler` run through the MIDDLEWARE chain, its outcome in `record`.

        Without a chain, untraced and outside a session (where a cancelled
        call answers rather than raises), the handler itself: `_post` notes
        its failure (no extra await per request). Else, untraced, a `partial`
        of `observed` (no closure made per request).
        """
        record.principal = call.principal
        record.peer = call.peer
        session = call.session
        if session is not None:
            record.session = session.id
        if call.method == "tools/call":
            # the tool and action named, and whether the catalogue has them
            params = call.params
            name = params.get("name")
            if isinstance(name, str):
                record.tool = name
                spec = self._catalogue.by_name.get(name)
                record.known_tool = spec is not None or name == RESERVED_NAME
                arguments = params.get("arguments")
                action = (
                    arguments.get("action") if isinstance(arguments, dict) else None
                )
                if isinstance(action, str) and spec is not None and spec.plain is None:
                    record.action = action
                    record.known_action = action in spec.actions
        call.record = record
        chain = self._middleware
        tracing = self._tracing
        if tracing is None:
            if not chain and session is None:
                return handler
            return partial(observed, record, chain, _refusal_result, handler)
        return _traced(tracing, record, chain, handler)

    def _make_tracing(self) -> Tracing:
        """The request spans (TRACING): imports OpenTelemetry, the `[otel]` extra."""
        try:
            from wymcp.core.server._tracing import Tracing  # noqa: PLC0415 - the optional [otel] extra
        except ImportError as error:
            msg = (
                "TRACING needs the OpenTelemetry API: pip install "
                '"wymcp-core-server[otel]"'
            )
            raise ImportError(msg) from error
        catalogue = self._catalogue
        return Tracing(lambda name: catalogue.prompt(name) is not None)

    # ------------------------------------------------------------ GET/DELETE

    async def get(self, exchange: Exchange, stream: Stream) -> Reply:
        """Serve a session's SSE stream.

        It lasts until the session ends or another GET replaces it.
        """
        return await self._streams.hold(exchange, stream, self._session_path.get)

    async def hold_stream(
        self,
        exchange: Exchange,
        stream: Stream,
        serve: Callable[[Exchange, Stream], Awaitable[Reply]],
    ) -> Reply:
        """`serve` a long-lived stream a transport keeps itself, as a GET stream.

        Counted under `max_streams` and `max_streams_per_client` (503 past
        them) and ended when the token that opened it expires: a POST stream
        resumed from `BROKER` is held as any other.
        """
        return await self._streams.hold(exchange, stream, serve)

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
        self._detached.cancel_all()

    # -------------------------------------------------------------- methods

    async def _discover(self, call: Call) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(self.options.protocol_versions),
            "capabilities": self.capabilities(call.version),
        }
        if self.options.instructions is not None:
            result["instructions"] = self.options.instructions
        return self._listing.hinted(call, result)

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


def _rate_limiter(opts: EngineOptions) -> tuple[RateLimiter, ...]:
    """The RATE_LIMITS middleware (innermost: the user's see its refusals)."""
    if not opts.rate_limits:
        return ()
    store = opts.rate_store or LocalRates(clock=opts.clock)
    return (RateLimiter(opts.rate_limits, store),)


def _traced(
    tracing: Tracing,
    record: CallRecord,
    chain: Sequence[Middleware],
    handler: Handler,
) -> Handler:
    """`handler` through `chain` inside the request's span (`TRACING`).

    Its own function: the closure's cells are made only when traced.
    """

    def run(opened: Call) -> Coroutine[Any, Any, Result]:
        return tracing.run(
            record,
            opened,
            lambda: observed(record, chain, _refusal_result, handler, opened),
        )

    return run


def _failed(record: CallRecord | None, error: RpcError) -> None:
    """Note in `record` (if any) the error a request was answered with."""
    if record is None:
        return
    if record.outcome == "ok":
        record.outcome = rpc_outcome(record, error)
    if error.reason is not None:
        record.reason = error.reason


def _refusal_result(record: CallRecord, refused: CallRefused) -> Result:
    """A middleware's refusal: a tool refusal for `tools/call`, else -32600."""
    if record.method != "tools/call":
        raise RpcError(
            INVALID_REQUEST, refused.message, {"error": refused.code}
        ) from None
    payload: dict[str, Any] = {"error": refused.code, "message": refused.message}
    if refused.retry_after_ms is not None:
        payload["retry_after_ms"] = refused.retry_after_ms
    if record.known_tool:
        payload["tool"] = record.tool
        pointer = f'tool: "{record.tool}"'
        if record.known_action:
            payload["action"] = record.action
            pointer += f', action: "{record.action}"'
        payload["help"] = f"{RESERVED_NAME} {{{pointer}}}"
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return {"content": [{"type": "text", "text": text}], "isError": True}


async def _answered(reply: Reply) -> Reply:
    """A reply decided before any await, as the coroutine `Engine.post` returns."""
    return reply
