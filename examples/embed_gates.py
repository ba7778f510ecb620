"""Use only wymcp's gates inside a plain aiohttp JSON handler (no MCP at all).

`wymcp.core.gates.check` refuses unknown keys, missing fields and bad values
with one bounded JSON answer that names every offending path; `plain_refusal`
gives it the REST form (paths from the body, no MCP fields). Run it with
`.venv/bin/python examples/embed_gates.py` and POST JSON to
http://127.0.0.1:8080/orders. Explained in docs/embedding.md.
"""

import json
from typing import Any

from aiohttp import web

from wymcp.core.gates import check, plain_refusal
from wymcp.core.schema import Action, Tool


class Orders(Tool):
    """The order API: its contract (the actions) and its work (run_action).

    Nothing here is served over MCP; the same class could be, unchanged.
    """

    name = "orders"
    description = "Place orders."
    actions = {  # noqa: RUF012 -- a declaration, never mutated
        "place": Action(
            description="Place an order",
            properties={
                "customer": {"type": "string", "minLength": 1, "maxLength": 80},
                "items": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 100,
                    "items": {
                        "type": "object",
                        "properties": {
                            "sku": {"type": "string", "minLength": 1},
                            "qty": {"type": "integer", "minimum": 1, "maximum": 99},
                        },
                        "required": ["sku", "qty"],
                    },
                },
                "deliver_on": {"type": "string", "format": "date"},
                "gift": {"type": "boolean"},
            },
            required=["customer", "items"],
            defaults={"gift": False},
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:  # noqa: ARG002 -- the Tool interface; no MCP context here
        """Place an order whose data passed every gate."""
        units = sum(item["qty"] for item in data["items"])
        return {"accepted": data, "units": units}


ORDERS_KEY = web.AppKey("orders", Orders)


async def place_order(request: web.Request) -> web.Response:
    """Check the body with the gates, then act only on what passed."""
    try:
        body = await request.json()
    except json.JSONDecodeError:
        return web.json_response({"error": "invalid_json"}, status=400)
    if not isinstance(body, dict):
        return web.json_response({"error": "expected_object"}, status=400)
    orders = request.app[ORDERS_KEY]
    verdict = check(orders, "place", body)
    if not verdict.accepted or verdict.data is None:
        # `items[1].qty`, not `data.items[1].qty`; no tool/action/help fields.
        return web.json_response(plain_refusal(verdict), status=422)
    # verdict.data: `2.0` read as 2 where the schema says integer, defaults merged.
    placed = await orders.run_action("place", dict(verdict.data), None)
    return web.json_response(placed, status=201)


def make_app() -> web.Application:
    """The order service: one JSON route, gated."""
    app = web.Application()
    app[ORDERS_KEY] = Orders()
    app.router.add_post("/orders", place_order)
    return app


if __name__ == "__main__":
    web.run_app(make_app(), host="127.0.0.1", port=8080)
