"""Mount a wymcp endpoint in an aiohttp application that already has its own routes.

Run it with `.venv/bin/python examples/embed_setup.py`, then point an MCP
client at http://127.0.0.1:8080/mcp; `/health` and `/stock/{sku}` keep
answering as before. Explained in docs/embedding.md.
"""

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from wymcp.core.schema import Action, Tool, ToolError
from wymcp.transport.aiohttp import setup

STOCK = {"apple": 12, "pear": 0}


class Stock(Tool):
    """Look up how many items of a product are in stock."""

    name = "stock"
    description = "Read the shop's stock."
    actions = {  # noqa: RUF012 -- a tool declaration, never mutated
        "lookup": Action(
            description="How many items of one product are in stock",
            properties={"sku": {"type": "string", "minLength": 1, "maxLength": 40}},
            required=["sku"],
            examples=[{"sku": "apple"}],
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:  # noqa: ARG002 -- the Tool interface
        """Answer a lookup that passed the gates."""
        if data["sku"] not in STOCK:
            raise ToolError("No product has that sku.")
        return {"sku": data["sku"], "in_stock": STOCK[data["sku"]]}


@web.middleware
async def served_by(
    request: web.Request,
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
) -> web.StreamResponse:
    """The shop's own middleware: stamps every response it sees."""
    response = await handler(request)
    response.headers["X-Served-By"] = "shop"
    return response


async def health(request: web.Request) -> web.Response:  # noqa: ARG001 -- aiohttp handler signature
    """The shop's own route."""
    return web.json_response({"ok": True})


async def stock_level(request: web.Request) -> web.Response:
    """The shop's own JSON API, unaware of MCP."""
    sku = request.match_info["sku"]
    if sku not in STOCK:
        raise web.HTTPNotFound
    return web.json_response({"sku": sku, "in_stock": STOCK[sku]})


def make_app() -> web.Application:
    """Build the shop's application, then mount the MCP endpoint beside its routes."""
    app = web.Application(middlewares=[served_by])
    app.router.add_get("/health", health)
    app.router.add_get("/stock/{sku}", stock_level)
    # One call: no settings module needed, the settings are passed as overrides.
    setup(app, TOOLS=[Stock], PATH="/mcp", SERVER_NAME="shop")
    return app


if __name__ == "__main__":
    web.run_app(make_app(), host="127.0.0.1", port=8080)
