"""The one shape every settings problem takes (a level, a stable id, the fix).

`CheckMessage` is one problem; `ImproperlyConfigured` raises every error at
once; `Invalid` is how a converter reports the problems of one value.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal

import attrs

ERROR: Literal["error"] = "error"
WARNING: Literal["warning"] = "warning"

WRONG_TYPE: Final = "wymcp.E001"
MISSPELT_NAME: Final = "wymcp.E002"
UNIMPORTABLE_PATH: Final = "wymcp.E003"
INVALID_VALUE: Final = "wymcp.E004"
UNIMPORTABLE_MODULE: Final = "wymcp.E005"
UNKNOWN_NAME: Final = "wymcp.W001"


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


class ImproperlyConfigured(Exception):  # noqa: N818 - Django's name, which users know
    """Settings that cannot be used; `problems` holds every error found."""

    def __init__(self, problems: Iterable[CheckMessage]) -> None:
        self.problems = tuple(problems)
        lines = [f"{len(self.problems)} problem(s) in the wymcp settings:"]
        lines += [f"  {problem}" for problem in self.problems]
        super().__init__("\n".join(lines))


class Invalid(Exception):  # noqa: N818 - a problem report, not a crash
    """The problems of one setting's value (usually one, one per item for lists)."""

    def __init__(self, problem_id: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.problems = [CheckMessage(ERROR, problem_id, message, hint)]

    @classmethod
    def of(cls, problems: list[CheckMessage]) -> Invalid:
        """One report carrying several problems (every bad item of a list)."""
        first = problems[0]
        report = cls(first.id, first.message, first.hint)
        report.problems = problems
        return report


def echo_limit() -> int:
    """The longest piece of what a user wrote that a message may quote.

    It is the protocol vocabulary's `ECHO_LIMIT`, read when a message is made
    so that importing `wymcp.conf` does not import the engine.
    """
    from wymcp.core.server import ECHO_LIMIT  # noqa: PLC0415 - see the docstring

    return ECHO_LIMIT
