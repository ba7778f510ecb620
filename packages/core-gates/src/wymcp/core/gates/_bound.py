"""Bounding what a refusal carries: the first ten in path order, and echo cutting.

A refusal quotes the request only through keys and paths; each such text is cut at
`ECHO_LIMIT` characters (fewer when its characters need JSON escaping), and a list
of them keeps the first ten in path order plus a count of them all.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable, Sequence

from wymcp.core.schema import ECHO_LIMIT

FIRST = 10
_ESCAPED_BUDGET = 180
_ELLIPSIS = "…"

Token = str | int
Path = tuple[Token, ...]


def echo(text: str) -> str:
    """Cut an echoed text at `ECHO_LIMIT` characters, fewer if it needs escaping."""
    if len(text) <= ECHO_LIMIT and len(json.dumps(text)) <= _ESCAPED_BUDGET + 2:
        return text
    budget = _ESCAPED_BUDGET - len(json.dumps(_ELLIPSIS)) + 2
    kept: list[str] = []
    for char in text[: ECHO_LIMIT - 1]:
        cost = len(json.dumps(char)) - 2
        if cost > budget:
            break
        budget -= cost
        kept.append(char)
    return "".join(kept) + _ELLIPSIS


def token_key(token: Token) -> tuple[int, int, str]:
    """Order tokens: an all-digit token as an index (numerically), before any key."""
    text = str(token)
    if text.isascii() and text.isdigit():
        digits = text.lstrip("0") or "0"
        return (0, len(digits), digits + "\0" + text)
    return (1, 0, text)


def path_key(path: Sequence[Token]) -> tuple[tuple[int, int, str], ...]:
    """The sort key of a path: its tokens' keys in order (a prefix sorts first)."""
    return tuple(token_key(token) for token in path)


def first(paths: Iterable[Path]) -> tuple[list[Path], int]:
    """The first ten distinct paths in path order, and how many distinct paths."""
    distinct = set(paths)
    return heapq.nsmallest(FIRST, distinct, key=path_key), len(distinct)
