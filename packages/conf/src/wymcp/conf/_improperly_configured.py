"""The error raised when settings cannot be used, listing every problem at once."""

from __future__ import annotations

from collections.abc import Iterable

from wymcp.conf._check_message import CheckMessage


class ImproperlyConfigured(Exception):  # noqa: N818 - Django's name, which users know
    """Settings that cannot be used; `problems` holds every error found."""

    def __init__(self, problems: Iterable[CheckMessage]) -> None:
        self.problems = tuple(problems)
        lines = [f"{len(self.problems)} problem(s) in the wymcp settings:"]
        lines += [f"  {problem}" for problem in self.problems]
        super().__init__("\n".join(lines))
