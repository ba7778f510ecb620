"""Rendering a data path for a refusal: `data.items[3].qty`, `data["a.b"]`."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from wymcp.core.gates._bound import Token, echo
from wymcp.core.schema import ECHO_LIMIT

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def render_path(path: Sequence[Token], root: str = "data") -> str:
    """Spell a path from its root: an index in brackets, a key after a dot or quoted.

    An integer token is an array index (`[3]`); a key that is an identifier follows
    a dot; any other key, an all-digit one included, is quoted (`["0"]`). The text is
    cut at the echo bound.
    """
    parts = [root]
    length = len(root)
    for token in path:
        if isinstance(token, int):
            part = f"[{token}]"
        elif _IDENTIFIER.fullmatch(token):
            part = f".{token}"
        else:
            part = f"[{json.dumps(token[: 2 * ECHO_LIMIT], ensure_ascii=False)}]"
        parts.append(part)
        length += len(part)
        if length > 2 * ECHO_LIMIT:
            break
    return echo("".join(parts))
