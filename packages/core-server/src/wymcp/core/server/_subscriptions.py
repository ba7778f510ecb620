"""Change notifications of 2026-07-28: `subscriptions/listen` streams.

Each listen request holds its POST open as an SSE stream: the acknowledgement
first, then only the notification kinds it asked for, each tagged with the
subscription id (the listen request's id).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from wymcp.core.server._exchange import Stream
from wymcp.core.server._jsonrpc import invalid_params, notification
from wymcp.core.server._revision import META_SUBSCRIPTION
from wymcp.core.server._stream_outbox import Outbox
from wymcp.core.server._stream_pump import pump

MAX_URIS: Final = 100
"""Most resource URIs one listen request (or one session) may watch."""
MAX_URI_LENGTH: Final = 2048
"""Longest URI a watch may name: watches are kept (and echoed) while open."""
WATCH_BYTES: Final = 32 * 1024
"""Memory the URIs one session (or one listen stream) watches may take."""
_SLOT: Final = 40
"""Bytes a watched URI costs beyond its string: its set slot and hash."""


def watch_cost(uri: str) -> int:
    """What keeping `uri` in a watch set costs, in bytes of memory."""
    return sys.getsizeof(uri) + _SLOT


_FLAGS: Final = {
    "toolsListChanged": "tools",
    "promptsListChanged": "prompts",
    "resourcesListChanged": "resources",
}


@attrs.define(eq=False)
class Listener:
    """One open listen stream: what it asked for and its queue."""

    id: str | int
    kinds: frozenset[str]
    uris: frozenset[str]
    queue: Outbox = attrs.field(factory=lambda: Outbox(name="listen stream"))


class Subscriptions:
    """The open listen streams of one engine."""

    def __init__(self) -> None:
        self._listeners: set[Listener] = set()

    def __len__(self) -> int:
        return len(self._listeners)

    def changed(self, kind: str) -> None:
        """Tell every listener that asked for `kind` its list changed."""
        message = notification(f"notifications/{kind}/list_changed")
        for listener in list(self._listeners):
            if kind in listener.kinds:
                listener.queue.put(message, key=("list", kind))

    def updated(self, uri: str) -> None:
        """Tell every listener watching `uri` that it changed."""
        message = notification("notifications/resources/updated", {"uri": uri})
        for listener in list(self._listeners):
            if uri in listener.uris:
                listener.queue.put(message, key=uri)

    def close(self) -> None:
        """End every listen stream gracefully."""
        for listener in self._listeners:
            listener.queue.end()

    @staticmethod
    def honoured(
        requested: object,
        *,
        has_prompts: bool,
        has_resources: bool,
        serves: Callable[[str], bool] = lambda _uri: True,
    ) -> dict[str, Any]:
        """The subset of a SubscriptionFilter this server honours.

        Of the first `MAX_URIS` `resourceSubscriptions` it keeps, in order,
        those it `serves`, up to `WATCH_BYTES` of memory.
        """
        if not isinstance(requested, Mapping):
            raise invalid_params("params.notifications must be an object.")
        available = {"tools": True, "prompts": has_prompts, "resources": has_resources}
        honoured: dict[str, Any] = {}
        for flag, kind in _FLAGS.items():
            if requested.get(flag) is True and available[kind]:
                honoured[flag] = True
        uris = requested.get("resourceSubscriptions")
        if has_resources and isinstance(uris, list):
            kept = _watchable(uris, serves)
            if kept:
                honoured["resourceSubscriptions"] = kept
        return honoured

    async def listen(
        self, rid: str | int, honoured: Mapping[str, Any], stream: Stream
    ) -> dict[str, Any]:
        """Serve one listen stream until the engine closes it."""
        listener = Listener(
            id=rid,
            kinds=frozenset(k for f, k in _FLAGS.items() if honoured.get(f)),
            uris=frozenset(honoured.get("resourceSubscriptions", ())),
        )
        tag = {META_SUBSCRIPTION: rid}

        async def acknowledge() -> None:
            await stream.open({"X-Accel-Buffering": "no"})
            await stream.send(
                notification(
                    "notifications/subscriptions/acknowledged",
                    {"notifications": dict(honoured), "_meta": tag},
                )
            )

        async def write(message: Any) -> None:
            params = dict(message.get("params") or {})
            params["_meta"] = tag
            await stream.send({**message, "params": params})

        self._listeners.add(listener)
        try:
            await pump(listener.queue, write, first=acknowledge, what="listen stream")
        finally:
            self._listeners.discard(listener)
        return {"_meta": dict(tag)}


def _watchable(uris: list[Any], serves: Callable[[str], bool]) -> list[str]:
    """The URIs a listen stream keeps: served, distinct, within both bounds."""
    kept: list[str] = []
    seen: set[str] = set()
    spent = 0
    for uri in uris[:MAX_URIS]:
        if not isinstance(uri, str) or len(uri) > MAX_URI_LENGTH or uri in seen:
            continue
        cost = watch_cost(uri)
        if spent + cost > WATCH_BYTES:
            break
        if serves(uri):
            kept.append(uri)
            seen.add(uri)
            spent += cost
    return kept
