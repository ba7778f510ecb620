"""The fixture's resources: static text, static binary, a template and a watched one."""

import json
from collections.abc import Mapping, Sequence
from typing import Any

from wymcp.core.server import Resource
from wymcp_conformance._media import tiny_png

STATIC_TEXT = "This is the content of the static text resource."


class StaticText(Resource):
    """A plain-text resource with fixed content."""

    name = "static_text"
    uri = "test://static-text"
    description = "A static text resource for testing."
    mime_type = "text/plain"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        """Return the fixed sentence."""
        del uri, params, ctx
        return STATIC_TEXT


class StaticBinary(Resource):
    """A binary resource: the one-pixel PNG."""

    name = "static_binary"
    uri = "test://static-binary"
    description = "A static binary resource (a PNG image) for testing."
    mime_type = "image/png"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        """Return the PNG bytes (sent as a base64 blob)."""
        del uri, params, ctx
        return tiny_png()


class TemplateData(Resource):
    """A template family: `test://template/{id}/data` answers JSON naming its id."""

    name = "template_data"
    uri_template = "test://template/{id}/data"
    description = "JSON data for any id, for testing URI templates."
    mime_type = "application/json"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        """Return the JSON document of this id."""
        del uri, ctx
        ident = params["id"]
        document = {"id": ident, "templateTest": True, "data": f"Data for ID: {ident}"}
        return json.dumps(document, separators=(",", ":"))

    def complete(
        self, argument: str, value: str, context: Mapping[str, str]
    ) -> Sequence[str]:
        """Suggest ids that start with what was typed."""
        del context
        if argument != "id":
            return []
        return [ident for ident in ("1", "123", "42") if ident.startswith(value)]


class WatchedResource(Resource):
    """A resource clients subscribe to (2025-11-25 `resources/subscribe`)."""

    name = "watched_resource"
    uri = "test://watched-resource"
    description = "A resource whose updates clients can subscribe to."
    mime_type = "text/plain"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        """Return its current content."""
        del uri, params, ctx
        return "Watched resource content."
