"""Resources and templates: listing, reading, unknown URIs, subscriptions."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from wymcp.core.schema import ConfigurationError, Tool
from wymcp.core.server import (
    Engine,
    Exchange,
    Headers,
    Resource,
    ResourceNotFoundError,
    embedded_resource,
)


class StaticText(Resource):
    name = "static-text"
    uri = "test://static-text"
    description = "A static text."
    mime_type = "text/plain"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        return "This is the content of the static text resource."


class StaticBinary(Resource):
    name = "static-binary"
    uri = "test://static-binary"
    mime_type = "image/png"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        return b"\x89PNG"


class Template(Resource):
    name = "template"
    uri_template = "test://template/{id}/data"
    description = "Data by id."
    mime_type = "application/json"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        if params["id"] == "404":
            raise ResourceNotFoundError("no row 404 in table secret_things")
        return json.dumps({"id": params["id"], "templateTest": True})

    def complete(
        self, argument: str, value: str, context: Mapping[str, str]
    ) -> Sequence[str]:
        return [v for v in ("123", "124", "200") if v.startswith(value)]


class Embedded(Resource):
    name = "embedded"
    uri = "test://embedded"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        return [embedded_resource(uri, text="a"), {"uri": uri, "text": "b"}]


class Broken(Resource):
    name = "broken"
    uri = "test://broken"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        raise RuntimeError("disk on fire at /secret")


class Zero(Tool):
    name = "zero"
    description = "Nothing."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return "ok"


@pytest.fixture
def rwire(make_wire):
    return make_wire(
        Zero,
        resources=(StaticText, StaticBinary, Template, Embedded, Broken),
        ttl_ms=1000,
    )


async def test_resources_list_and_templates_list(rwire):
    reply, _ = await rwire.modern("resources/list")
    result = reply.body["result"]
    assert [r["uri"] for r in result["resources"]] == [
        "test://static-text",
        "test://static-binary",
        "test://embedded",
        "test://broken",
    ]
    assert result["resources"][0]["description"] == "A static text."
    assert result["ttlMs"] == 1000
    assert result["cacheScope"] == "public"
    reply, _ = await rwire.modern("resources/templates/list")
    templates = reply.body["result"]["resourceTemplates"]
    assert templates == [
        {
            "uriTemplate": "test://template/{id}/data",
            "name": "template",
            "description": "Data by id.",
            "mimeType": "application/json",
        }
    ]


async def test_read_text_binary_and_template(rwire):
    reply, _ = await rwire.modern("resources/read", {"uri": "test://static-text"})
    result = reply.body["result"]
    assert result["contents"] == [
        {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    ]
    assert "ttlMs" in result
    reply, _ = await rwire.modern("resources/read", {"uri": "test://static-binary"})
    assert reply.body["result"]["contents"][0]["blob"] == "iVBORw=="
    reply, _ = await rwire.modern("resources/read", {"uri": "test://template/123/data"})
    contents = reply.body["result"]["contents"][0]
    assert contents["uri"] == "test://template/123/data"
    assert json.loads(contents["text"]) == {"id": "123", "templateTest": True}


async def test_read_accepts_embedded_content_and_mappings(rwire):
    reply, _ = await rwire.modern("resources/read", {"uri": "test://embedded"})
    assert [c["text"] for c in reply.body["result"]["contents"]] == ["a", "b"]


async def test_an_unknown_uri_is_invalid_params_with_the_uri_at_2026(rwire):
    reply, _ = await rwire.modern("resources/read", {"uri": "test://nope"}, rid=4)
    assert reply.status == 400
    error = reply.body["error"]
    assert error["code"] == -32602
    assert error["data"]["uri"] == "test://nope"
    assert reply.body["id"] == 4


async def test_an_unknown_uri_is_resource_not_found_in_a_session(rwire):
    sid = await rwire.initialize()
    reply, _ = await rwire.session(sid, "resources/read", {"uri": "test://nope"})
    assert reply.body["error"]["code"] == -32002
    assert reply.body["error"]["data"]["uri"] == "test://nope"


async def test_a_read_that_finds_nothing_answers_as_an_unknown_uri(rwire):
    uri = "test://template/404/data"
    reply, _ = await rwire.modern("resources/read", {"uri": uri}, rid=5)
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32602
    assert reply.body["error"]["data"] == {"uri": uri}
    assert "secret" not in json.dumps(reply.body)
    sid = await rwire.initialize()
    reply, _ = await rwire.session(sid, "resources/read", {"uri": uri})
    assert reply.body["error"]["code"] == -32002
    assert reply.body["error"]["data"] == {"uri": uri}


async def test_a_raising_read_answers_internal_error_without_details(rwire):
    reply, _ = await rwire.modern("resources/read", {"uri": "test://broken"})
    assert reply.body["error"]["code"] == -32603
    assert "secret" not in json.dumps(reply.body)


async def test_a_missing_uri_is_invalid_params(rwire):
    reply, _ = await rwire.modern("resources/read", {})
    assert reply.body["error"]["code"] == -32602


async def test_resource_methods_are_unknown_without_resources(make_wire):
    wire = make_wire(Zero)
    reply, _ = await wire.modern("resources/list")
    assert reply.status == 404
    reply, _ = await wire.modern("server/discover")
    assert "resources" not in reply.body["result"]["capabilities"]


async def test_capabilities_announce_resources_and_completions(rwire):
    reply, _ = await rwire.modern("server/discover")
    caps = reply.body["result"]["capabilities"]
    assert caps["resources"] == {"listChanged": True}
    assert caps["completions"] == {}
    sid = await rwire.initialize()
    del sid


async def test_completion_of_a_template_variable(rwire):
    reply, _ = await rwire.modern(
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
            "argument": {"name": "id", "value": "12"},
        },
    )
    assert reply.body["result"]["completion"]["values"] == ["123", "124"]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {
            "ref": {"type": "ref/resource", "uri": "test://x/{y}"},
            "argument": {"name": "y", "value": ""},
        },
        {"ref": {"type": "ref/other"}, "argument": {"name": "y", "value": ""}},
        {
            "ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
            "argument": {"name": 1},
        },
    ],
)
async def test_bad_completion_requests_are_invalid_params(rwire, params):
    reply, _ = await rwire.modern("completion/complete", params)
    assert reply.body["error"]["code"] == -32602


async def test_subscribe_and_updated_on_the_session_stream(rwire):
    sid = await rwire.initialize()
    reply, _ = await rwire.session(
        sid, "resources/subscribe", {"uri": "test://static-text"}
    )
    assert reply.body["result"] == {}
    stream = rwire.Stream()
    get = asyncio.create_task(
        rwire.engine.get(
            Exchange(method="GET", headers=Headers.of([("Mcp-Session-Id", sid)])),
            stream,
        )
    )
    await asyncio.sleep(0)
    rwire.engine.resource_updated("test://static-text")
    rwire.engine.resource_updated("test://static-binary")
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert stream.messages == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "test://static-text"},
        }
    ]
    for message in stream.messages:
        rwire.validate("2025-11-25", message, None)
    reply, _ = await rwire.session(
        sid, "resources/unsubscribe", {"uri": "test://static-text"}
    )
    assert reply.body["result"] == {}
    await rwire.engine.aclose()
    await get


def test_a_resource_needs_exactly_one_of_uri_and_template():
    class Both(Resource):
        name = "both"
        uri = "a://b"
        uri_template = "a://{b}"

    with pytest.raises(ConfigurationError, match="exactly one"):
        Engine(tools=[], resources=[Both])


def test_a_bad_template_is_a_configuration_error():
    class Bad(Resource):
        name = "bad"
        uri_template = "a://{b"

    with pytest.raises(ConfigurationError, match="uri_template"):
        Engine(tools=[], resources=[Bad])


def test_two_resources_with_one_uri_are_refused():
    with pytest.raises(ConfigurationError):
        Engine(tools=[], resources=[StaticText, StaticText])


def test_declarations_that_are_not_resources_are_refused():
    class Nameless(Resource):
        uri = "x://y"

    with pytest.raises(ConfigurationError, match="name"):
        Engine(tools=[], resources=[Nameless])
    with pytest.raises(ConfigurationError, match="not a wymcp Resource"):
        Engine(tools=[], resources=[object()])


async def test_a_read_returning_nonsense_answers_internal_error(make_wire):
    class Odd(Resource):
        name = "odd"
        uri = "x://odd"

        async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
            return 42

    wire = make_wire(resources=(Odd,))
    reply, _ = await wire.modern("resources/read", {"uri": "x://odd"})
    assert reply.body["error"]["code"] == -32603


async def test_resources_list_clears_the_session_flag(rwire):
    sid = await rwire.initialize()
    rwire.engine.add_resource(StaticText)
    reply, _ = await rwire.session(sid, "resources/list")
    assert reply.status == 200
