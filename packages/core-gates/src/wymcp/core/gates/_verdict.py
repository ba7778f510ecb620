"""The answer of the gates to one call."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class Verdict:
    """What `check` decided.

    Attributes:
        accepted: whether every gate passed.
        data: the data as the value gate read it (a whole float cast to an integer
            where the schema says integer), defaults merged after; None if refused.
        refusal: the refusal payload (a JSON object), or None if accepted.
        dropped: in lenient mode, the rendered paths of the unknown keys dropped
            (the first ten, then `and N more`).
    """

    accepted: bool
    data: dict[str, Any] | None = None
    refusal: dict[str, Any] | None = None
    dropped: tuple[str, ...] = ()
