"""Bounding what a refusal carries: the first ten in path order, and echo cutting.

A refusal quotes the request only through keys and paths; each such text is cut at
`ECHO_LIMIT` characters (fewer when its characters need JSON escaping), invisible
ones spelled as escapes, and a list keeps the first ten in path order and a count.
"""

from __future__ import annotations

import heapq
import json
import unicodedata
from collections.abc import Iterable, Sequence

from wymcp.core.schema import ECHO_LIMIT

FIRST = 10
_ESCAPED_BUDGET = 180
_ELLIPSIS = "…"
_ASTRAL = 0x10000
_INVISIBLE = frozenset({"Cf", "Zl", "Zp"})
"""Unicode categories echoed as escapes: format characters (bidi overrides such
as U+202E, zero-width ones, U+FEFF) and the line and paragraph separators."""

Token = str | int
Path = tuple[Token, ...]


def echo(text: str) -> str:
    r"""Cut an echoed text at `ECHO_LIMIT` characters, fewer if it needs escaping.

    A character that would reorder or hide the text around it (`_INVISIBLE`)
    is spelled as its escape, `\u202e`, as JSON spells a control character.
    """
    if len(text) <= ECHO_LIMIT:
        shown = text if text.isascii() else "".join(map(_shown, text))
        if len(json.dumps(shown)) <= _ESCAPED_BUDGET + 2:
            return shown
    budget = _ESCAPED_BUDGET - len(json.dumps(_ELLIPSIS)) + 2
    kept: list[str] = []
    for char in text[: ECHO_LIMIT - 1]:
        piece = _shown(char)
        cost = len(json.dumps(piece)) - 2
        if cost > budget:
            break
        budget -= cost
        kept.append(piece)
    return "".join(kept) + _ELLIPSIS


def _shown(char: str) -> str:
    """`char` as echoed: itself, or its escape if it is invisible (`_INVISIBLE`)."""
    if char.isascii() or unicodedata.category(char) not in _INVISIBLE:
        return char
    code = ord(char)
    return f"\\u{code:04x}" if code < _ASTRAL else f"\\U{code:08x}"


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
