"""A user's plain WSGI handler that checks its JSON body with wymcp's gates.

No MCP and no HTTP library: `wymcp-core-gates` alone. Posts one good and one
misspelt order through the handler and prints both answers and the top-level
modules that were loaded, as JSON.
"""

import io
import json
import sys
from wsgiref.util import setup_testing_defaults

from wymcp.core.gates import check, plain_refusal
from wymcp.core.schema import Action, Tool


class Orders(Tool):
    """The order API: its contract (the actions) and its work."""

    name = "orders"
    description = "Place orders."
    actions = {  # noqa: RUF012 - a declaration, never mutated
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
                            "qty": {"type": "integer", "minimum": 1},
                        },
                        "required": ["sku", "qty"],
                    },
                },
                "gift": {"type": "boolean"},
            },
            required=["customer", "items"],
            defaults={"gift": False},
        )
    }

    async def run_action(self, action, data, ctx):
        """Place an order whose data passed every gate."""
        return data


ORDERS = Orders()


def app(environ, start_response):
    """Check the body with the gates, answer 201 with the checked data or 422."""
    size = int(environ.get("CONTENT_LENGTH") or 0)
    body = json.loads(environ["wsgi.input"].read(size))
    verdict = check(ORDERS, "place", body)
    if verdict.accepted:
        status, answer = "201 Created", dict(verdict.data)
    else:
        status, answer = "422 Unprocessable Entity", plain_refusal(verdict)
    start_response(status, [("Content-Type", "application/json")])
    return [json.dumps(answer).encode()]


def post(body):
    """One POST through the handler, as a WSGI server would make it."""
    raw = json.dumps(body).encode()
    environ = {}
    setup_testing_defaults(environ)
    environ.update(REQUEST_METHOD="POST", CONTENT_LENGTH=str(len(raw)))
    environ["wsgi.input"] = io.BytesIO(raw)
    started = []
    payload = b"".join(app(environ, lambda status, headers: started.append(status)))
    return [started[0], json.loads(payload)]


good = post({"customer": "ada", "items": [{"sku": "A1", "qty": 2.0}]})
bad = post({"customer": "ada", "itmes": [{"sku": "A1", "qty": 0}]})
loaded = sorted({name.split(".")[0] for name in sys.modules})
sys.stdout.write(json.dumps({"good": good, "bad": bad, "loaded": loaded}) + "\n")
