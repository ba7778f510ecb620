"""What a session keeps of its `initialize`: compact JSON, decoded when read.

A decoded declaration can cost sixteen times its JSON (8 KB of `[[],[],…]` is
128 KiB of lists); the JSON text costs its length, for the session's life.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Final

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

EMPTY: Final = b"{}"


def compact(value: Mapping[str, Any]) -> bytes:
    """`value` as compact UTF-8 JSON (what a session keeps)."""
    return _encode(value).encode("utf-8", "surrogatepass")


class JsonView(Mapping[str, Any]):
    """A read-only mapping over compact JSON, decoded on first use.

    Each view decodes at most once; a session hands out a new view per call,
    so nothing decoded outlives the call that read it.
    """

    __slots__ = ("_decoded", "_text")

    def __init__(self, text: bytes) -> None:
        self._text = text
        self._decoded: dict[str, Any] | None = None

    def _value(self) -> dict[str, Any]:
        if self._decoded is None:
            decoded = json.loads(self._text)
            self._decoded = decoded if isinstance(decoded, dict) else {}
        return self._decoded

    def __getitem__(self, key: str) -> Any:
        return self._value()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._value())

    def __len__(self) -> int:
        return len(self._value())

    def __bool__(self) -> bool:
        return self._text != EMPTY

    def __contains__(self, key: object) -> bool:
        return key in self._value()

    def __repr__(self) -> str:
        return f"JsonView({self._value()!r})"
