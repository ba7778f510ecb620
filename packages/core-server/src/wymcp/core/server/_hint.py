"""Follow-up suggestions a tool attaches to an answer (`Tool.hints`)."""

from __future__ import annotations

from typing import Any

import attrs


def _is_str(_instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(
            f"Hint {attribute.name} must be a string, got {type(value).__name__}"
        )


@attrs.frozen(kw_only=True)
class Hint:
    """A suggested next call: which tool and action, why, and an example."""

    tool: str = attrs.field(validator=_is_str)
    action: str = attrs.field(validator=_is_str)
    description: str = attrs.field(validator=_is_str)
    example: Any = None

    def to_json(self) -> dict[str, Any]:
        """The wire shape; `example` only when set."""
        shape: dict[str, Any] = {
            "tool": self.tool,
            "action": self.action,
            "description": self.description,
        }
        if self.example is not None:
            shape["example"] = self.example
        return shape
