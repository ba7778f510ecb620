"""The shop's stock tool: look an article up, reserve a batch of articles."""

from typing import Any, ClassVar

from wymcp.core.server.tools import Action, Context, Tool, ToolError

SHELF = {"apple": 120, "pear": 40, "plum": 0}


class Stock(Tool):
    name = "stock"
    description = "Look up and reserve articles of the shop."
    actions: ClassVar = {
        "lookup": Action(
            description="How many of an article are on the shelf",
            properties={"sku": {"type": "string", "minLength": 1}},
            required=["sku"],
        ),
        "reserve": Action(
            description="Reserve a batch of articles",
            properties={
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
                "note": {"type": "string", "maxLength": 200},
            },
            required=["items"],
            defaults={"note": ""},
        ),
    }

    async def run_action(
        self, action: str, data: dict[str, Any], ctx: Context
    ) -> object:
        if action == "lookup":
            if data["sku"] not in SHELF:
                raise ToolError(f"No article {data['sku']!r} in this shop.")
            return {"sku": data["sku"], "on_shelf": SHELF[data["sku"]]}
        reserved: list[str] = []
        for done, item in enumerate(data["items"], start=1):
            await ctx.report_progress(done, len(data["items"]))
            if SHELF.get(item["sku"], 0) < item["qty"]:
                raise ToolError(f"Not enough {item['sku']} on the shelf.")
            reserved.append(item["sku"])
        await ctx.log("info", f"reserved {len(reserved)} article(s)")
        return {"reserved": reserved, "note": data["note"]}
