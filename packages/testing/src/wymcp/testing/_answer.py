"""`Answer`: one JSON-RPC answer as a client saw it, with what streamed first.

The in-process client and the direct `call()` both return one, so a test
reads a tool's result, a refusal, a JSON-RPC error and the progress and log
notifications of the call the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from wymcp.transport.aiohttp import ClientReply


def _decoded(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


REFUSAL_CODES = frozenset(
    {
        "unknown_action",
        "unknown_params",
        "missing_required_fields",
        "missing_required_group",
        "invalid_values",
        "invalid_arguments",
    }
)
"""The `error` codes of a gate refusal (docs/refusals.md)."""


@attrs.frozen
class Answer(ClientReply):
    """What one request got back.

    `status` is the HTTP status, `response` the JSON-RPC message that
    answered the request (None when the server answered with no body, as
    for a notification), `messages` every JSON-RPC message the server
    streamed on the request before it (notifications and server-to-client
    requests, in order), `headers` the HTTP response headers.
    """

    @property
    def error(self) -> dict[str, Any] | None:
        """The JSON-RPC `error` object, or None when the request got a result."""
        found = None if self.response is None else self.response.get("error")
        return found if isinstance(found, dict) else None

    @property
    def is_error(self) -> bool:
        """Whether a tool result says `isError` (a refusal or a failed call)."""
        return bool((self.result or {}).get("isError"))

    @property
    def content(self) -> list[dict[str, Any]]:
        """The result's content blocks (empty when there is no result)."""
        content = (self.result or {}).get("content")
        if not isinstance(content, list):
            return []
        return [block for block in content if isinstance(block, dict)]

    @property
    def text(self) -> str:
        """The text of every text block, joined by newlines."""
        return "\n".join(
            str(block.get("text", ""))
            for block in self.content
            if block.get("type") == "text"
        )

    @property
    def structured(self) -> Any:
        """The result's `structuredContent`, or None."""
        return (self.result or {}).get("structuredContent")

    @property
    def value(self) -> Any:
        """What the tool answered, decoded.

        `structuredContent` when there is one, else the first text block
        decoded as JSON, else the text; None for no content.
        """
        result = self.result or {}
        if "structuredContent" in result:
            return result["structuredContent"]
        texts = [b for b in self.content if b.get("type") == "text"]
        if not texts:
            return None
        first = str(texts[0].get("text", ""))
        decoded = _decoded(first)
        if decoded is None and first != "null":
            return self.text
        return decoded

    @property
    def refusal(self) -> dict[str, Any] | None:
        """The refusal payload of a gate (`error`, `message`, ...), or None."""
        if not self.is_error or len(self.content) != 1:
            return None
        decoded = _decoded(self.text)
        if (
            isinstance(decoded, dict)
            and decoded.get("error") in REFUSAL_CODES
            and isinstance(decoded.get("help"), str)
        ):
            return decoded
        return None

    @property
    def notifications(self) -> list[Mapping[str, Any]]:
        """The notifications streamed before the answer, in order."""
        return [m for m in self.messages if "method" in m and "id" not in m]

    @property
    def requests(self) -> list[Mapping[str, Any]]:
        """The requests the server sent the client during the call, in order."""
        return [m for m in self.messages if "method" in m and "id" in m]

    @property
    def progress(self) -> list[dict[str, Any]]:
        """The params of every `notifications/progress`, in order."""
        return self._params_of("notifications/progress")

    @property
    def logs(self) -> list[dict[str, Any]]:
        """The params of every `notifications/message` (log), in order."""
        return self._params_of("notifications/message")

    def _params_of(self, method: str) -> list[dict[str, Any]]:
        return [
            dict(m.get("params") or {})
            for m in self.notifications
            if m.get("method") == method
        ]
