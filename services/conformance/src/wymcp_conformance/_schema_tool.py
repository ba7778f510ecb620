"""The tool whose input schema uses JSON Schema 2020-12 keywords `tools/list` must keep.

`$schema`, `$defs` with an `$anchor`, `$ref`, `allOf`/`anyOf`, `if`/`then`/`else`
and `additionalProperties: false`, as the suite's json-schema-2020-12 scenario
reads them back.
"""

from typing import Any, ClassVar

from wymcp.core.schema import Tool

DIALECT = "https://json-schema.org/draft/2020-12/schema"


class JsonSchema202012(Tool):
    """Takes a contact: a phone or an e-mail, whichever the contact method names."""

    name = "json_schema_2020_12_tool"
    description = "Record a contact; its input schema uses JSON Schema 2020-12."
    input_schema: ClassVar[dict[str, Any]] = {
        "$schema": DIALECT,
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string"},
                },
            },
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {
            "properties": {"contactMethod": {"const": "phone"}},
            "required": ["contactMethod"],
        },
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Answer with the fields it received."""
        del ctx
        return {"received": sorted(arguments)}
