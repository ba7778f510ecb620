"""How list methods answer: one page of items, and the stateless cache hints."""

from __future__ import annotations

from typing import Any

from wymcp.core.server._call import Call
from wymcp.core.server._cursor import page
from wymcp.core.server._options import EngineOptions


class Listing:
    """Pages and cache hints (`ttlMs`, `cacheScope`) of one engine's answers."""

    def __init__(self, options: EngineOptions) -> None:
        self._page_size = options.page_size
        self._ttl_ms = options.ttl_ms
        self._cache_scope = options.cache_scope

    def hinted(self, call: Call, result: dict[str, Any]) -> dict[str, Any]:
        """`result` with the cache hints its revision carries."""
        if call.revision.stateless:
            result["ttlMs"] = self._ttl_ms
            result["cacheScope"] = self._cache_scope
        return result

    def page(
        self, call: Call, items: list[Any], key: str, *, seen: str | None = None
    ) -> dict[str, Any]:
        """The page of `items` the call's cursor names, under `key`, hinted.

        `seen` is the kind of list ("tools") the session has now read: a
        list_changed it was owed is dropped.
        """
        shown, next_cursor = page(items, call.params.get("cursor"), self._page_size)
        result: dict[str, Any] = {key: shown}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        if seen is not None and call.session is not None:
            call.session.dirty.discard(seen)
        return self.hinted(call, result)
