"""The context a tool receives (`ctx`).

Who called, at which revision, and how to report progress, log, or ask the
client something.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Container, Iterable, Mapping
from typing import Any, Final

import attrs

from wymcp.core.server._exchange import Stream
from wymcp.core.server._jsonrpc import notification
from wymcp.core.server._levels import is_level, passes
from wymcp.core.server._revision import MODERN

_log = logging.getLogger("wymcp.core.server")


class ClientRequestError(Exception):
    """Asking the client failed.

    `reason` is a short code: not_supported, timeout, client_error,
    disconnected, busy (the session waits for `MAX_QUESTIONS` answers).
    """

    def __init__(self, reason: str, message: str, error: object = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.error = error


class MissingCapabilityError(ClientRequestError):
    """At 2026-07-28, the request did not declare a capability a tool needs.

    The call answers 400 with -32021 and `data.requiredCapabilities`.
    """

    def __init__(self, required: Mapping[str, Any]) -> None:
        names = ", ".join(sorted(required))
        super().__init__(
            "not_supported", f"The request did not declare the {names} capability."
        )
        self.required = dict(required)


CAPABILITY_OF: Final = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


def require_capabilities(
    requests: Iterable[InputRequest], capabilities: Container[str]
) -> None:
    """Raise MissingCapabilityError naming what `requests` need and was not declared."""
    missing: dict[str, Any] = {
        CAPABILITY_OF[r.method]: {}
        for r in requests
        if CAPABILITY_OF.get(r.method, r.method) not in capabilities
    }
    if missing:
        raise MissingCapabilityError(missing)


@attrs.frozen
class InputRequest:
    """One thing to ask the client: a method and its params."""

    method: str
    params: Mapping[str, Any] = attrs.field(factory=dict)

    @classmethod
    def elicitation(
        cls, message: str, requested_schema: Mapping[str, Any]
    ) -> InputRequest:
        """Ask the user for values through a form."""
        return cls(
            "elicitation/create",
            {"message": message, "requestedSchema": dict(requested_schema)},
        )

    @classmethod
    def sampling(
        cls, prompt: str, *, max_tokens: int = 1024, **params: Any
    ) -> InputRequest:
        """Ask the client's model to answer `prompt`."""
        return cls(
            "sampling/createMessage",
            {
                "messages": [
                    {"role": "user", "content": {"type": "text", "text": prompt}}
                ],
                "maxTokens": max_tokens,
                **params,
            },
        )

    @classmethod
    def roots(cls) -> InputRequest:
        """Ask the client for its roots."""
        return cls("roots/list", {})

    def to_json(self) -> dict[str, Any]:
        """The wire shape of an input request."""
        shape: dict[str, Any] = {"method": self.method}
        if self.params:
            shape["params"] = dict(self.params)
        return shape


Asker = Callable[[dict[str, InputRequest], Any], Awaitable[dict[str, dict[str, Any]]]]
"""Asks the client several things and returns the answers by key."""


class ToolContext:
    """What a tool call knows about its request, and its side channel.

    It implements `wymcp.core.schema.Context`.
    """

    # what few calls set, read from the class until then (one store less each
    # per call)
    _last_progress: float | None = None
    task_starter: Callable[[], Awaitable[bool]] | None = None
    """Set by the engine when this call may become a task (SEP-2663)."""
    _on_progress: (
        Callable[[float, float | None, str | None], Awaitable[None]] | None
    ) = None

    def __init__(  # noqa: PLR0917 - positional too: `Contexts` passes them so
        self,
        request_id: str | int | None = None,
        session_id: str | None = None,
        protocol_version: str = MODERN,
        meta: Mapping[str, Any] | None = None,
        principal: object | None = None,
        client_capabilities: Mapping[str, Any] | None = None,
        stream: Stream | None = None,
        log_enabled: bool = True,  # noqa: FBT001, FBT002 - see the noqa above
        log_threshold: str | None = None,
        asker: Asker | None = None,
        make_asker: Callable[[], Asker] | None = None,
        tool: str | None = None,
        action: str | None = None,
        state: Any = None,
        server: Any = None,
        request_state: Any = None,
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
        self._make_asker = make_asker
        """Builds the asker on the first question when `asker` is None."""
        self.state = state
        """What the LIFESPAN factory yielded, shared by every call (or None)."""
        self.request_state = request_state
        """The state this call sealed into its previous round (2026), or None."""
        self.server = server
        """The engine serving the call (to add or remove tools at runtime)."""

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
            # still a turn of the loop: a tool that reports in a loop after its
            # client left must meet the cancellation of its (own) task
            await asyncio.sleep(0)
            return
        try:
            await self._stream.send(message)
        except Exception:  # noqa: BLE001 - a gone client must not fail the tool
            _log.debug("dropped a notification: the stream is gone")
            self._stream = None

    async def close_stream(self) -> bool:
        """End this call's SSE response now; the call goes on (SEP-1699 polling).

        The client resumes with `Last-Event-ID` and gets what the call sends
        next, its answer last. False where the call's stream cannot (a JSON
        answer, a revision before 2025-11-25, 2026-07-28, stdio).
        """
        close = getattr(self._stream, "close_early", None)
        if close is None:
            return False
        closed: bool = await close()
        return closed

    async def report_progress(
        self,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> None:
        """Send `notifications/progress` when the caller asked for progress.

        Values that do not increase are dropped (progress MUST increase). In a
        task, progress becomes the task's `statusMessage`.
        """
        if self._on_progress is not None:
            await self._on_progress(progress, total, message)
            return
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

    async def start_task(self) -> bool:
        """Go on as a task (SEP-2663) if this call may be one; whether it is.

        The request answers its CreateTaskResult at once; the tool keeps
        running, its questions go to `tasks/get` and its result to the task.
        A tool declared with `task_prelude` calls this after its questions.
        """
        if self.task_starter is None:
            return False
        return await self.task_starter()

    def become_task(
        self,
        asker: Asker,
        on_progress: Callable[[float, float | None, str | None], Awaitable[None]]
        | None = None,
    ) -> None:
        """From now on ask through `asker`, send nothing on the request's stream.

        Progress goes to `on_progress` (the task's `statusMessage`).
        """
        self._asker = asker
        self._stream = None
        self._on_progress = on_progress

    async def ask(
        self, requests: Mapping[str, InputRequest], *, state: Any = None
    ) -> dict[str, dict[str, Any]]:
        """Ask the client several things at once; the answers by key.

        At 2026-07-28 the call ends with an `input_required` result carrying
        the requests not yet answered (and `state`, sealed) and runs again
        when the client retries; at 2025 each is a request on the call's
        stream. Raises `ClientRequestError` when asking is impossible.
        """
        asker = self._asker
        if asker is None:
            if self._make_asker is None:
                raise ClientRequestError(
                    "not_supported", "This call cannot ask the client anything."
                )
            asker = self._asker = self._make_asker()
        return await asker(dict(requests), state)

    async def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any],
        *,
        key: str = "elicitation",
        state: Any = None,
    ) -> dict[str, Any]:
        """Ask the user through the client (form mode); the ElicitResult."""
        request = InputRequest.elicitation(message, requested_schema)
        return (await self.ask({key: request}, state=state))[key]

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
        request = InputRequest.sampling(prompt, max_tokens=max_tokens, **params)
        return (await self.ask({key: request}, state=state))[key]

    async def list_roots(
        self, *, key: str = "roots", state: Any = None
    ) -> dict[str, Any]:
        """Ask the client for its roots; the ListRootsResult."""
        return (await self.ask({key: InputRequest.roots()}, state=state))[key]
