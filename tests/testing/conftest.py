"""Tools the testing package's tests serve, and the settings that serve them.

The sample project is a separate pytest run (in a subprocess), never
collected here.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from wymcp.conf import Settings
from wymcp.core.schema import Action, Tool, ToolError

collect_ignore = ["sample_project"]

NAME_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


class Orders(Tool):
    """A multi-action tool that reports progress and logs."""

    name = "orders"
    description = "Take orders."
    actions: ClassVar = {
        "place": Action(
            description="Place an order",
            properties={
                "customer": {"type": "string", "minLength": 1},
                "items": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "sku": {"type": "string"},
                            "qty": {"type": "integer", "minimum": 1, "maximum": 1000},
                        },
                        "required": ["sku", "qty"],
                    },
                },
                "rush": {"type": "boolean"},
            },
            required=["customer", "items"],
            defaults={"rush": False},
        ),
        "cancel": Action(
            description="Cancel an order",
            properties={"order_id": {"type": "integer"}},
            required=["order_id"],
        ),
        "explode": Action(description="Raise something unexpected", properties={}),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        if action == "cancel":
            raise ToolError(f"Order {data['order_id']} does not exist.")
        if action == "explode":
            raise RuntimeError("a detail that stays in the log")
        total = len(data["items"])
        for done in range(1, total + 1):
            await ctx.report_progress(done, total, f"item {done}")
        await ctx.log("info", {"placed": total}, logger="orders")
        await ctx.log("debug", "details")
        return {
            "customer": data["customer"],
            "units": sum(item["qty"] for item in data["items"]),
            "rush": data["rush"],
            "who": ctx.principal,
        }


class Weather(Tool):
    """A plain tool whose argument is mirrored in an Mcp-Param header."""

    name = "weather"
    description = "Weather by region."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
        },
        "required": ["region"],
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return f"{arguments['region']}: sunny for {arguments.get('days', 1)} day(s)"


class Greeter(Tool):
    """A plain tool that asks the user for a name."""

    name = "greeter"
    description = "Greets whoever answers."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        answer = await ctx.elicit("Your name?", NAME_SCHEMA, key="name")
        if answer.get("action") != "accept":
            return "No name, no greeting."
        return f"Hello, {answer['content']['name']}!"


TOOLS = (Orders, Weather, Greeter)


@pytest.fixture
def settings() -> Settings:
    """Settings serving every test tool, with a fixed state secret."""
    return Settings().evolve(TOOLS=TOOLS, STATE_SECRET="s" * 32)


@pytest.fixture
def orders_tool() -> type[Tool]:
    """The multi-action Orders tool (a class, as a user declares it)."""
    return Orders


@pytest.fixture
def weather_tool() -> type[Tool]:
    """The plain Weather tool with a header-annotated argument."""
    return Weather


@pytest.fixture
def greeter_tool() -> type[Tool]:
    """The plain Greeter tool that elicits a name."""
    return Greeter
