"""The official MCP SDK (``mcp`` 2.x, ``MCPServer``) serving the benchmark tools.

Runs inside the SDK's own virtual environment; never imports wymcp.
"""

import argparse

import uvicorn
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field


class Item(BaseModel):
    sku: str = Field(min_length=1, max_length=32)
    qty: int = Field(ge=1, le=1000)
    price: float = Field(ge=0)


class Order(BaseModel):
    customer: str = Field(min_length=1, max_length=64)
    items: list[Item] = Field(max_length=100)


class OrderSummary(BaseModel):
    count: int
    total: float


def build() -> MCPServer:
    server = MCPServer("bench-sdk", log_level="WARNING")

    @server.tool()
    async def calc(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    @server.tool()
    async def order_total(order: Order) -> OrderSummary:
        """Total an order."""
        total = sum(item.qty * item.price for item in order.items)
        return OrderSummary(count=len(order.items), total=total)

    @server.tool()
    async def total(values: list[float]) -> float:
        """Sum a list of numbers."""
        return sum(values)

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    parser.add_argument("--json", action="store_true", help="JSON responses")
    parser.add_argument("--stdio", action="store_true", help="serve stdin/stdout")
    args = parser.parse_args()
    if args.stdio:
        build().run("stdio")
        return
    if args.port is None:
        parser.error("--port is required unless --stdio")
    app = build().streamable_http_app(json_response=args.json, host="127.0.0.1")
    uvicorn.run(
        app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False
    )


if __name__ == "__main__":
    main()
