"""Log levels (RFC 5424 severities as MCP names them) and their order."""

from __future__ import annotations

from typing import Final

LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
_RANK: Final = {name: rank for rank, name in enumerate(LOG_LEVELS)}


def is_level(value: object) -> bool:
    """Whether `value` names a log level."""
    return isinstance(value, str) and value in _RANK


def passes(level: str, threshold: str | None) -> bool:
    """Whether a message at `level` goes out under `threshold` (None: all)."""
    if threshold is None:
        return True
    return _RANK.get(level, 0) >= _RANK.get(threshold, 0)
