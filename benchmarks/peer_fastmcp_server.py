"""fastmcp 4.x serving the benchmark tools.

Runs inside fastmcp's own virtual environment; never imports wymcp.
"""

import argparse
from typing import Annotated

import uvicorn
from fastmcp import FastMCP
from pydantic import BaseModel, Field

mcp = FastMCP("bench-fastmcp")


class Item(BaseModel):
    sku: Annotated[str, Field(min_length=1, max_length=32)]
    qty: Annotated[int, Field(ge=1, le=1000)]
    price: Annotated[float, Field(ge=0)]


class Order(BaseModel):
    customer: Annotated[str, Field(min_length=1, max_length=64)]
    items: Annotated[list[Item], Field(max_length=100)]


class OrderSummary(BaseModel):
    count: int
    total: float


@mcp.tool
async def calc(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@mcp.tool
async def order_total(order: Order) -> OrderSummary:
    """Total an order."""
    return OrderSummary(
        count=len(order.items),
        total=sum(item.qty * item.price for item in order.items),
    )


@mcp.tool
async def total(values: list[float]) -> float:
    """Sum a list of numbers."""
    return sum(values)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--json", action="store_true", help="JSON responses")
    args = parser.parse_args()
    app = mcp.http_app(path="/mcp", json_response=args.json)
    uvicorn.run(
        app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False
    )


if __name__ == "__main__":
    main()
