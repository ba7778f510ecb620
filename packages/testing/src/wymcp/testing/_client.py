"""`Client`: an MCP client over aiohttp's in-process test server.

It speaks 2026-07-28 (stateless: `_meta` and mirrored headers on every
request) or a 2025 revision (initialize, `Mcp-Session-Id`, DELETE at the
end), reads JSON and SSE answers alike, and keeps what streamed during each
call in its `Answer`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Final, Self

from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer

from wymcp.conf import Settings, load_settings
from wymcp.core.schema import RESERVED_NAME, HeaderAnnotation, header_annotations
from wymcp.core.server import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    MODERN,
    SESSION_HEADER,
    encode_json,
    is_stateless,
    mirrored_headers,
    request_message,
    request_meta,
    session_headers,
)
from wymcp.testing._answer import Answer
from wymcp.testing._sse_events import read_events
from wymcp.testing._tool_arguments import CLIENT_INFO, tool_arguments
from wymcp.transport.aiohttp import create_app

RequestHandler = Callable[[str, dict[str, Any]], Awaitable[Mapping[str, Any]]]
"""Answers a request the server sends the client: (method, params) -> result."""

ACCEPT: Final = "application/json, text/event-stream"
_MAX_ROUNDS: Final = 10


def _decoded(body: bytes) -> Any:
    """The JSON value of a body or event, or None when it is empty or not JSON."""
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


class Client:
    """An MCP client of one in-process application (start it, or `async with`).

    `protocol_version` picks the revision: 2026-07-28 (stateless) or
    2025-11-25, 2025-06-18, 2025-03-26 (a session opened at start).
    `capabilities` are the client capabilities it declares, `log_level` the
    level it asks logs at (None: at 2026-07-28 no logs, at 2025 all),
    `headers` extra HTTP headers sent with every request (e.g.
    Authorization), `on_request` answers what the server asks the client
    (elicitation, sampling, roots); without it such a request gets an error.
    """

    def __init__(
        self,
        app: web.Application,
        *,
        path: str = "/mcp",
        protocol_version: str = MODERN,
        capabilities: Mapping[str, Any] | None = None,
        client_info: Mapping[str, Any] | None = None,
        log_level: str | None = None,
        headers: Mapping[str, str] | None = None,
        on_request: RequestHandler | None = None,
    ) -> None:
        self.app = app
        self.path = path
        self.protocol_version = protocol_version
        self.capabilities = dict(capabilities or {})
        self.client_info = dict(client_info or CLIENT_INFO)
        self.log_level = log_level
        self.headers = dict(headers or {})
        self.on_request = on_request
        self.session_id: str | None = None
        self.initialize_result: dict[str, Any] | None = None
        self._http: TestClient[web.Request, web.Application] | None = None
        self._ids = itertools.count(1)
        self._annotations: dict[str, tuple[HeaderAnnotation, ...]] | None = None

    @property
    def modern(self) -> bool:
        """Whether the client speaks 2026-07-28 (stateless)."""
        return is_stateless(self.protocol_version)

    @property
    def http(self) -> TestClient[web.Request, web.Application]:
        """The aiohttp test client underneath, for raw HTTP requests."""
        if self._http is None:
            raise RuntimeError("The client is not started: use `async with`.")
        return self._http

    # ------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Start the test server and, at a 2025 revision, open the session."""
        if self._http is not None:
            return
        http: TestClient[web.Request, web.Application] = TestClient(
            TestServer(self.app, host="127.0.0.1")
        )
        await http.start_server()
        self._http = http
        try:
            if not self.modern:
                await self._initialize()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """End the session (DELETE), then stop the server and the app cleanly."""
        http, self._http = self._http, None
        if http is None:
            return
        try:
            if self.session_id is not None:
                headers = {**self.headers, **self._session_headers()}
                async with http.delete(self.path, headers=headers):
                    pass
        finally:
            self.session_id = None
            await http.close()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _initialize(self) -> None:
        params = {
            "protocolVersion": self.protocol_version,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        }
        answer = await self.request("initialize", params)
        if answer.result is None:
            raise RuntimeError(f"initialize failed: HTTP {answer.status}")
        self.initialize_result = answer.result
        self.protocol_version = str(answer.result["protocolVersion"])
        self.session_id = answer.headers.get(SESSION_HEADER)
        await self.notify("notifications/initialized")
        if self.log_level is not None:
            await self.request("logging/setLevel", {"level": self.log_level})

    async def set_log_level(self, level: str) -> Answer | None:
        """Ask for logs at `level` from now on.

        At 2026-07-28 later requests carry it in `_meta`; at 2025 it is sent
        as `logging/setLevel` (whose answer is returned).
        """
        self.log_level = level
        if self.modern:
            return None
        return await self.request("logging/setLevel", {"level": level})

    # --------------------------------------------------------------- sending

    def _session_headers(self) -> dict[str, str]:
        return session_headers(self.protocol_version, self.session_id)

    def _request_headers(
        self, method: str, params: Mapping[str, Any]
    ) -> list[tuple[str, str]]:
        headers = [("Accept", ACCEPT), *self.headers.items()]
        if self.modern:
            name = params.get("name")
            annotations = (
                (self._annotations or {}).get(name, ()) if isinstance(name, str) else ()
            )
            headers += mirrored_headers(method, params, annotations)
        elif method != "initialize":
            headers += self._session_headers().items()
        return headers

    def _params(
        self, params: Mapping[str, Any] | None, meta: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        shaped = dict(params or {})
        given = shaped.get("_meta")
        extra = {**(given if isinstance(given, Mapping) else {}), **(meta or {})}
        if self.modern:
            shaped["_meta"] = request_meta(
                capabilities=self.capabilities,
                client_info=self.client_info,
                log_level=self.log_level,
                extra=extra,
            )
        elif extra:
            shaped["_meta"] = extra
        return shaped

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> Answer:
        """Send one JSON-RPC request in the client's revision; return its answer.

        `meta` adds to `params._meta` (e.g. a progressToken).
        """
        shaped = self._params(params, meta)
        message = request_message(next(self._ids), method, shaped)
        return await self.post(message, self._request_headers(method, shaped))

    async def notify(
        self, method: str, params: Mapping[str, Any] | None = None
    ) -> Answer:
        """Send one JSON-RPC notification; return the (empty, 202) answer."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        shaped = self._params(params, None)
        if shaped:
            message["params"] = shaped
        return await self.post(message, self._request_headers(method, shaped))

    async def post(
        self, message: Mapping[str, Any], headers: Sequence[tuple[str, str]]
    ) -> Answer:
        """POST one message with exactly these headers (plus Content-Type)."""
        sent = [("Content-Type", "application/json"), *headers]
        async with self.http.post(
            self.path, data=encode_json(message), headers=sent
        ) as response:
            return await self._read(response)

    async def _read(self, response: ClientResponse) -> Answer:
        headers = dict(response.headers)
        if response.content_type != "text/event-stream":
            decoded = _decoded(await response.read())
            return Answer(
                status=response.status,
                response=decoded if isinstance(decoded, dict) else None,
                headers=headers,
            )
        messages: list[Mapping[str, Any]] = []
        final: Mapping[str, Any] | None = None
        async for event in read_events(response.content):
            message = _decoded(event.data.encode("utf-8"))
            if not isinstance(message, dict):
                continue
            if "method" not in message:
                final = message
                continue
            messages.append(message)
            if "id" in message:
                await self._answer_request(message)
        return Answer(
            status=response.status,
            response=final,
            messages=tuple(messages),
            headers=headers,
        )

    async def _handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.on_request is None:
            return {
                "error": {
                    "code": METHOD_NOT_FOUND,
                    "message": f"This test client does not answer {method}.",
                }
            }
        try:
            return {"result": dict(await self.on_request(method, params))}
        except Exception as error:  # noqa: BLE001 - the handler's failure is the answer
            return {"error": {"code": INTERNAL_ERROR, "message": str(error)}}

    async def _answer_request(self, request: Mapping[str, Any]) -> None:
        outcome = await self._handle(
            str(request["method"]), dict(request.get("params") or {})
        )
        reply = {"jsonrpc": "2.0", "id": request["id"], **outcome}
        await self.post(
            reply,
            [
                ("Accept", ACCEPT),
                *self.headers.items(),
                *self._session_headers().items(),
            ],
        )

    # ----------------------------------------------------------------- tools

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server lists (all pages), help included."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            answer = await self.request(
                "tools/list", {"cursor": cursor} if cursor is not None else None
            )
            if answer.result is None:
                raise RuntimeError(f"tools/list failed: {answer.response}")
            tools += answer.result.get("tools", [])
            cursor = answer.result.get("nextCursor")
            if cursor is None:
                break
        self._annotations = {
            tool["name"]: header_annotations(tool.get("inputSchema")) for tool in tools
        }
        return tools

    async def _learn_annotations(self) -> None:
        """List the tools once to learn their header annotations (best effort)."""
        try:
            await self.list_tools()
        except RuntimeError:
            self._annotations = {}

    async def call(
        self,
        tool: str,
        action: str | None = None,
        data: Mapping[str, Any] | None = None,
        *,
        arguments: Mapping[str, Any] | None = None,
        progress: bool | str | int = False,
        meta: Mapping[str, Any] | None = None,
    ) -> Answer:
        """Call `tool` (`action` with `data`, or raw `arguments`); its answer.

        `progress` asks for progress notifications (True: a token of the
        client's choosing); they and any logs are in `Answer.progress` and
        `Answer.logs`. At 2026-07-28, an `input_required` result is answered
        through `on_request` and retried, when `on_request` is set.
        """
        if self.modern and self._annotations is None:
            await self._learn_annotations()
        extra = dict(meta or {})
        if progress is not False:
            extra["progressToken"] = "progress" if progress is True else progress
        params: dict[str, Any] = {
            "name": tool,
            "arguments": tool_arguments(action, data, arguments),
        }
        answer = await self.request("tools/call", params, meta=extra)
        for _ in range(_MAX_ROUNDS):
            result = answer.result or {}
            if result.get("resultType") != "input_required" or self.on_request is None:
                break
            retry = dict(params)
            retry["inputResponses"] = await self._input_responses(result)
            if "requestState" in result:
                retry["requestState"] = result["requestState"]
            answer = await self.request("tools/call", retry, meta=extra)
        return answer

    async def _input_responses(self, result: Mapping[str, Any]) -> dict[str, Any]:
        responses: dict[str, Any] = {}
        for key, asked in (result.get("inputRequests") or {}).items():
            outcome = await self._handle(
                str(asked.get("method")), dict(asked.get("params") or {})
            )
            responses[key] = outcome.get("result", outcome)
        return responses

    async def help(self, tool: str | None = None, action: str | None = None) -> Answer:
        """Call the built-in help tool: the index, one tool, or one action."""
        arguments: dict[str, Any] = {}
        if tool is not None:
            arguments["tool"] = tool
        if action is not None:
            arguments["action"] = action
        return await self.call(RESERVED_NAME, arguments=arguments)


def served_settings(
    settings: Settings | str | None,
    tools: Sequence[object] | None,
    overrides: Mapping[str, object],
) -> Settings:
    """The settings a test's server runs (`connect`, the `wymcp_settings` fixture).

    `settings` is a `Settings`, a settings module name, or None; `tools`
    become its TOOLS and UPPERCASE `overrides` are applied. With `tools` and
    no `settings`, the defaults are the base, not `WYMCP_SETTINGS_MODULE`.
    """
    if isinstance(settings, Settings):
        chosen = settings.evolve(**overrides) if overrides else settings
    elif tools is not None and settings is None:
        chosen = Settings().evolve(**overrides)
    else:
        chosen = load_settings(settings, **overrides)
    if tools is not None:
        chosen = chosen.evolve(TOOLS=tuple(tools))
    return chosen


def connect(
    settings: Settings | str | None = None,
    *,
    tools: Sequence[object] | None = None,
    app: web.Application | None = None,
    path: str | None = None,
    protocol_version: str = MODERN,
    capabilities: Mapping[str, Any] | None = None,
    log_level: str | None = None,
    headers: Mapping[str, str] | None = None,
    on_request: RequestHandler | None = None,
    **overrides: object,
) -> Client:
    """Return a `Client` (unstarted: use `async with`) of an in-process server.

    The server is `app` (a `web.Application` wymcp is set up on), or one
    `create_app` builds from `settings` (a `Settings`, a settings module
    name, or None for `WYMCP_SETTINGS_MODULE`), with `tools` as its TOOLS
    and UPPERCASE `overrides` applied.
    """
    if app is None:
        chosen = served_settings(settings, tools, overrides)
        app = create_app(chosen)
        path = path if path is not None else chosen.PATH
    return Client(
        app,
        path=path if path is not None else "/mcp",
        protocol_version=protocol_version,
        capabilities=capabilities,
        log_level=log_level,
        headers=headers,
        on_request=on_request,
    )
