"""The context a tool receives (`ctx`).

Who called, at which revision, and how to report progress, log, or ask the
client something.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from wymcp.core.server._exchange import Stream
from wymcp.core.server._jsonrpc import notification
from wymcp.core.server._levels import is_level, passes

_log = logging.getLogger("wymcp.core.server")

Asker = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""Sends one client request (elicitation, sampling, roots) and awaits it."""


class ClientRequestError(Exception):
    """Asking the client failed.

    `reason` is a short code: not_supported, timeout, client_error,
    disconnected.
    """

    def __init__(self, reason: str, message: str, error: object = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.error = error


class ToolContext:
    """What a tool call knows about its request, and its side channel."""

    def __init__(
        self,
        *,
        request_id: str | int | None = None,
        session_id: str | None = None,
        protocol_version: str = "2026-07-28",
        meta: Mapping[str, Any] | None = None,
        principal: object | None = None,
        client_capabilities: Mapping[str, Any] | None = None,
        stream: Stream | None = None,
        log_enabled: bool = True,
        log_threshold: str | None = None,
        asker: Asker | None = None,
        tool: str | None = None,
        action: str | None = None,
    ) -> None:
        self.request_id = request_id
        self.session_id = session_id
        self.protocol_version = protocol_version
        self.meta: Mapping[str, Any] = meta or {}
        self.principal = principal
        self.client_capabilities: Mapping[str, Any] = client_capabilities or {}
        self.tool = tool
        self.action = action
        self._stream = stream
        self._log_enabled = log_enabled
        self._log_threshold = log_threshold
        self._asker = asker
        self._last_progress: float | None = None

    @property
    def progress_token(self) -> str | int | None:
        """The request's `_meta.progressToken`, or None."""
        token = self.meta.get("progressToken")
        if isinstance(token, str) or (
            isinstance(token, int) and not isinstance(token, bool)
        ):
            return token
        return None

    async def _send(self, message: dict[str, Any]) -> None:
        if self._stream is None:
            return
        try:
            await self._stream.send(message)
        except Exception:  # noqa: BLE001 - a gone client must not fail the tool
            _log.debug("dropped a notification: the stream is gone")
            self._stream = None

    async def report_progress(
        self,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> None:
        """Send `notifications/progress` when the caller asked for progress.

        Values that do not increase are dropped (progress MUST increase).
        """
        token = self.progress_token
        if token is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            return
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._send(notification("notifications/progress", params))

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send `notifications/message` if the caller's log level lets it out."""
        if not self._log_enabled or not is_level(level):
            return
        if not passes(level, self._log_threshold):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._send(notification("notifications/message", params))

    async def _ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if self._asker is None:
            raise ClientRequestError(
                "not_supported", "This call cannot ask the client anything."
            )
        return await self._asker(method, params)

    async def elicit(
        self, message: str, requested_schema: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Ask the user through the client (form mode); the ElicitResult."""
        return await self._ask(
            "elicitation/create",
            {
                "message": message,
                "requestedSchema": dict(requested_schema),
            },
        )

    async def sample(
        self,
        prompt: str,
        *,
        max_tokens: int = 1024,
        **params: Any,
    ) -> dict[str, Any]:
        """Ask the client's model; the CreateMessageResult."""
        return await self._ask(
            "sampling/createMessage",
            {
                "messages": [
                    {"role": "user", "content": {"type": "text", "text": prompt}}
                ],
                "maxTokens": max_tokens,
                **params,
            },
        )

    async def list_roots(self) -> dict[str, Any]:
        """Ask the client for its roots; the ListRootsResult."""
        return await self._ask("roots/list", {})
