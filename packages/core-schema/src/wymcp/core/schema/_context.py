"""`Context`: the typed protocol of the `ctx` every tool, resource and prompt gets.

The server's `ToolContext` implements it; annotating `ctx: Context` lets
`mypy --strict` check tool code without importing the server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    # PEP 696: a bare `Context` means `Context[Any]` (typing has it from 3.13)
    from typing_extensions import TypeVar

    StateT_co = TypeVar("StateT_co", covariant=True, default=Any)
else:
    from typing import TypeVar

    StateT_co = TypeVar("StateT_co", covariant=True)


class Server(Protocol):
    """What a call may change on the engine serving it (`ctx.server`).

    Tools, resources and prompts added or removed at runtime, and the
    `notifications/resources/updated` a subscribed client gets.
    """

    def add_tool(self, tool: object) -> None:
        """Serve one more tool (a `Tool` class or instance)."""

    def remove_tool(self, name: str) -> bool:
        """Stop serving a tool; whether it was served."""

    def add_resource(self, resource: object) -> None:
        """Serve one more resource or template."""

    def remove_resource(self, key: str) -> bool:
        """Stop serving a resource (by URI or template); whether it was served."""

    def add_prompt(self, prompt: object) -> None:
        """Serve one more prompt."""

    def remove_prompt(self, name: str) -> bool:
        """Stop serving a prompt; whether it was served."""

    def resource_updated(self, uri: str) -> None:
        """Tell the clients subscribed to `uri` that it changed."""


class Context(Protocol[StateT_co]):
    """What a call knows about its request, and its side channel to the client.

    `state` is what the `LIFESPAN` factory yielded (None without one):
    `ctx: Context[AppState]` types it, a bare `Context` leaves it `Any`;
    `request_state` is what this call sealed into its previous round (2026-07-28).
    """

    @property
    def request_id(self) -> str | int | None:
        """The JSON-RPC id of the request."""

    @property
    def session_id(self) -> str | None:
        """The session (2025 revisions), None at 2026-07-28."""

    @property
    def protocol_version(self) -> str:
        """The protocol revision of the request."""

    @property
    def tool(self) -> str | None:
        """The tool called (None for a resource or a prompt)."""

    @property
    def action(self) -> str | None:
        """The action called (None for a plain tool)."""

    @property
    def principal(self) -> Any:
        """Who called, as the AUTH hook returned it (a `Principal`), or None."""

    @property
    def state(self) -> StateT_co:
        """What the `LIFESPAN` factory yielded, shared by every call (None)."""

    @property
    def server(self) -> Server:
        """The engine serving the call (`wymcp.core.server.Engine`)."""

    @property
    def request_state(self) -> Any:
        """The state this call sealed into its previous round, or None."""

    @property
    def meta(self) -> Mapping[str, Any]:
        """The request's `_meta`."""

    @property
    def client_capabilities(self) -> Mapping[str, Any]:
        """The capabilities the client declared."""

    @property
    def progress_token(self) -> str | int | None:
        """The request's `_meta.progressToken`, or None."""

    async def report_progress(
        self,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> None:
        """Send `notifications/progress` when the caller asked for progress."""

    async def close_stream(self) -> bool:
        """End this call's SSE response now; the call goes on (SEP-1699 polling).

        False where the call's stream cannot be resumed (a JSON answer, stdio).
        """

    async def start_task(self) -> bool:
        """Go on as a task (SEP-2663) if this call may be one; whether it is."""

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send `notifications/message` when the caller's log level lets it out."""

    async def ask(
        self, requests: Mapping[str, Any], *, state: Any = None
    ) -> dict[str, dict[str, Any]]:
        """Ask the client several things at once (`InputRequest` values by key)."""

    async def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any],
        *,
        key: str = "elicitation",
        state: Any = None,
    ) -> dict[str, Any]:
        """Ask the user through the client (form mode); the ElicitResult."""

    async def sample(
        self,
        prompt: str,
        *,
        max_tokens: int = 1024,
        key: str = "sampling",
        state: Any = None,
        **params: Any,
    ) -> dict[str, Any]:
        """Ask the client's model; the CreateMessageResult."""

    async def list_roots(
        self, *, key: str = "roots", state: Any = None
    ) -> dict[str, Any]:
        """Ask the client for its roots; the ListRootsResult."""
