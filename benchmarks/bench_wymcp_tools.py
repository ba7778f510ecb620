"""The benchmark's tools written for wymcp: the peers' tools as multi-action tools.

`calc` carries `add` (two numbers) and `total` (an unbounded list of numbers, the
bad-call probe); `orders` carries `total` (the 50-item order of peers.md).
"""

from __future__ import annotations

from typing import Any

from wymcp.core.schema import Action, Tool

_ITEM = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "minLength": 1, "maxLength": 32},
        "qty": {"type": "integer", "minimum": 1, "maximum": 1000},
        "price": {"type": "number", "minimum": 0},
    },
    "required": ["sku", "qty", "price"],
}


class Calc(Tool):
    """Arithmetic on numbers."""

    name = "calc"
    description = "Arithmetic on numbers."
    actions = {  # noqa: RUF012 - the Tool API declares actions as a class attribute
        "add": Action(
            description="Add two numbers",
            properties={"a": {"type": "number"}, "b": {"type": "number"}},
            required=["a", "b"],
        ),
        "total": Action(
            description="Sum a list of numbers",
            properties={"values": {"type": "array", "items": {"type": "number"}}},
            required=["values"],
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        del ctx
        if action == "add":
            return data["a"] + data["b"]
        return sum(data["values"])


class Orders(Tool):
    """Orders of items."""

    name = "orders"
    description = "Orders of items."
    actions = {  # noqa: RUF012 - the Tool API declares actions as a class attribute
        "total": Action(
            description="Count the items of an order and total their price",
            properties={
                "customer": {"type": "string", "minLength": 1, "maxLength": 64},
                "items": {"type": "array", "maxItems": 100, "items": _ITEM},
            },
            required=["customer", "items"],
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        del action, ctx
        items = data["items"]
        return {
            "count": len(items),
            "total": sum(item["qty"] * item["price"] for item in items),
        }
