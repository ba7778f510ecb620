"""`Client`: an MCP client over aiohttp's in-process test server.

It speaks 2026-07-28 or a 2025 revision through the HTTP transport's
`McpClient` (the one `wymcp call` uses), and keeps what streamed during each
call in its `Answer`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Final, Self

import attrs
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from wymcp.conf import Settings, load_settings
from wymcp.core.schema import RESERVED_NAME
from wymcp.core.server import INTERNAL_ERROR, METHOD_NOT_FOUND, MODERN
from wymcp.testing._answer import Answer
from wymcp.testing._tool_arguments import CLIENT_INFO, tool_arguments
from wymcp.transport.aiohttp import ClientReply, McpClient, McpClientError, create_app

RequestHandler = Callable[[str, dict[str, Any]], Awaitable[Mapping[str, Any]]]
"""Answers a request the server sends the client: (method, params) -> result."""

_MAX_ROUNDS: Final = 10


def _answer(reply: ClientReply) -> Answer:
    return Answer(**attrs.asdict(reply, recurse=False))


class Client:
    """An MCP client of one in-process application (start it, or `async with`).

    `protocol_version` picks the revision: 2026-07-28 (stateless) or
    2025-11-25, 2025-06-18, 2025-03-26 (a session opened at start).
    `capabilities` are the client capabilities it declares, `log_level` the
    level it asks logs at (None: at 2026-07-28 no logs, at 2025 all),
    `headers` extra HTTP headers sent with every request (e.g.
    Authorization), `on_request` answers what the server asks the client
    (elicitation, sampling, roots); without it such a request gets an error.
    The MCP part is `wymcp.transport.aiohttp.McpClient`, as for `wymcp call`.
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
        self.on_request = on_request
        self._http: TestClient[web.Request, web.Application] | None = None
        self.mcp = McpClient(
            lambda body, sent: self.http.post(self.path, data=body, headers=sent),
            lambda sent: self.http.delete(self.path, headers=sent),
            client_info=client_info or CLIENT_INFO,
            protocol_version=protocol_version,
            capabilities=capabilities,
            log_level=log_level,
            headers=headers,
            on_request=self._handle,
        )

    @property
    def protocol_version(self) -> str:
        """The revision spoken (the one `initialize` agreed, at 2025)."""
        return self.mcp.protocol_version

    @property
    def session_id(self) -> str | None:
        """The 2025 session's id, while one is open."""
        return self.mcp.session_id

    @property
    def log_level(self) -> str | None:
        """The level logs are asked at (`set_log_level` changes it)."""
        return self.mcp.log_level

    @property
    def headers(self) -> dict[str, str]:
        """The extra HTTP headers sent with every request."""
        return self.mcp.headers

    @property
    def capabilities(self) -> dict[str, Any]:
        """The client capabilities declared."""
        return self.mcp.capabilities

    @property
    def client_info(self) -> dict[str, Any]:
        """The `clientInfo` declared."""
        return self.mcp.client_info

    @property
    def initialize_result(self) -> dict[str, Any] | None:
        """What `initialize` answered (2025 revisions)."""
        return self.mcp.initialize_result

    @property
    def modern(self) -> bool:
        """Whether the client speaks 2026-07-28 (stateless)."""
        return self.mcp.modern

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
                await self.mcp.initialize()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """End the session (DELETE), then stop the server and the app cleanly."""
        http = self._http
        if http is None:
            return
        try:
            await self.mcp.end()
        finally:
            self._http = None
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

    async def set_log_level(self, level: str) -> Answer | None:
        """Ask for logs at `level` from now on.

        At 2026-07-28 later requests carry it in `_meta`; at 2025 it is sent
        as `logging/setLevel` (whose answer is returned).
        """
        self.mcp.log_level = level
        if self.modern:
            return None
        return await self.request("logging/setLevel", {"level": level})

    # --------------------------------------------------------------- sending

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
        return _answer(await self.mcp.request(method, params, meta=meta))

    async def notify(
        self, method: str, params: Mapping[str, Any] | None = None
    ) -> Answer:
        """Send one JSON-RPC notification; return the (empty, 202) answer."""
        return _answer(await self.mcp.notify(method, params))

    async def post(
        self, message: Mapping[str, Any], headers: Sequence[tuple[str, str]]
    ) -> Answer:
        """POST one message with exactly these headers (plus Content-Type)."""
        return _answer(await self.mcp.post(message, headers))

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

    # ----------------------------------------------------------------- tools

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server lists (all pages), help included."""
        try:
            return await self.mcp.list_all("tools/list", "tools")
        except McpClientError as exc:
            raise RuntimeError(str(exc)) from None

    async def _learn_annotations(self) -> None:
        """List the tools once to learn their header annotations (best effort)."""
        try:
            await self.list_tools()
        except RuntimeError:
            self.mcp.annotations = {}

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
        if self.modern and self.mcp.annotations is None:
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
