"""The one shape every settings problem takes: a level, a stable id, a fix.

Ids never change meaning: `wymcp.E…` are errors, `wymcp.W…` warnings, and
`docs/settings.md` lists every one.
"""

from __future__ import annotations

from typing import Literal

import attrs

ERROR: Literal["error"] = "error"
WARNING: Literal["warning"] = "warning"


@attrs.frozen
class CheckMessage:
    """One problem with the settings: what is wrong (`message`) and the fix (`hint`)."""

    level: Literal["error", "warning"]
    id: str
    message: str
    hint: str = ""

    @property
    def is_error(self) -> bool:
        """Whether this problem stops the server from starting."""
        return self.level == ERROR

    def __str__(self) -> str:
        text = f"{self.id} ({self.level}): {self.message}"
        return f"{text} HINT: {self.hint}" if self.hint else text
