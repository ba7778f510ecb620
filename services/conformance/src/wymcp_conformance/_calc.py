"""A real multi-action tool, so the suite also drives wymcp's own tool shape."""

from typing import Any, ClassVar

from wymcp.core.schema import Action, Tool

_OPERANDS = {
    "a": {"type": "number", "description": "The first operand."},
    "b": {"type": "number", "description": "The second operand."},
}


class Calc(Tool):
    """Adds or multiplies two numbers."""

    name = "calc"
    description = "Add or multiply two numbers."
    actions: ClassVar[dict[str, Action]] = {
        "add": Action(
            description="Add two numbers",
            properties=_OPERANDS,
            required=["a", "b"],
            examples=[{"a": 2, "b": 3}],
        ),
        "multiply": Action(
            description="Multiply two numbers",
            properties=_OPERANDS,
            required=["a", "b"],
            related=["add"],
            examples=[{"a": 4, "b": 2.5}],
        ),
    }
    output_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"result": {"type": "number"}},
        "required": ["result"],
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        """Compute the result."""
        del ctx
        a, b = data["a"], data["b"]
        return {"result": a + b if action == "add" else a * b}
