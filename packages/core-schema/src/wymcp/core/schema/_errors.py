"""The two exceptions of a tool author: a refusal by tool code, a bad declaration."""

from __future__ import annotations

from collections.abc import Sequence


class ToolError(Exception):
    """Raised by tool code: the call answers `isError: true` with this message."""


class ConfigurationError(Exception):
    """A tool declaration is wrong; names the tool, the action and every problem found.

    Attributes:
        tool: the tool's name (its class name when the name itself is bad), or None
            when the problems span several tools (each then names its tool).
        problems: every problem found, each prefixed with the action it belongs to.
    """

    def __init__(self, tool: str | None, problems: Sequence[str]) -> None:
        self.tool = tool
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {problem}" for problem in self.problems)
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        subject = "The tools have" if tool is None else f"Tool {tool!r} has"
        super().__init__(f"{subject} {count} configuration {noun}:\n{lines}")
