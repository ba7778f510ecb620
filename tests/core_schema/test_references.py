"""Registration never opens a connection: references to other documents are refused.

A listening socket on 127.0.0.1 stands for the remote server; every connection the
engine would open to fetch a schema lands in its backlog, where it is counted.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from wymcp.core.schema import Action, ConfigurationError, Tool, prepare
from wymcp.core.schema._references import outside_references


@pytest.fixture
def listener() -> Iterator[tuple[str, socket.socket]]:
    """A listening socket (never accepting) and its base URL."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.setblocking(False)
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}", server
    finally:
        server.close()


def connections(server: socket.socket) -> int:
    """How many connections reached the listener (accepted and closed here)."""
    count = 0
    while True:
        try:
            accepted, _ = server.accept()
        except BlockingIOError:
            return count
        accepted.close()
        count += 1


def plain(schema: dict[str, Any], output: dict[str, Any] | None = None) -> type[Tool]:
    async def run(self: Tool, arguments: dict[str, Any], ctx: object) -> None:
        del self, arguments, ctx

    return type(
        "Plain",
        (Tool,),
        {
            "name": "plain",
            "description": "A tool.",
            "input_schema": schema,
            "output_schema": output,
            "run": run,
        },
    )


def multi(properties: dict[str, Any]) -> type[Tool]:
    async def run_action(self: Tool, action: str, data: object, ctx: object) -> None:
        del self, action, data, ctx

    return type(
        "Multi",
        (Tool,),
        {
            "name": "multi",
            "description": "A tool.",
            "actions": {"go": Action(description="Go", properties=properties)},
            "run_action": run_action,
        },
    )


def _cases(url: str) -> list[tuple[type[Tool], str]]:
    remote = {"$ref": f"{url}/s.json"}
    return [
        (multi({"x": remote}), f"{url}/s.json"),
        (multi({"enum": {"items": remote}}), f"{url}/s.json"),
        (plain({"type": "object", "properties": {"x": remote}}), f"{url}/s.json"),
        (
            plain(
                {
                    "$id": f"{url}/root.json",
                    "type": "object",
                    "properties": {"x": {"$ref": "other.json"}},
                }
            ),
            "other.json",
        ),
        (plain({"type": "object"}, output={"$ref": f"{url}/out.json"}), "out.json"),
        (
            plain({"type": "object", "$defs": {"a": {"$dynamicRef": f"{url}/d"}}}),
            f"{url}/d",
        ),
    ]


@pytest.mark.parametrize("case", range(6))
def test_a_remote_reference_is_refused_without_a_connection(listener, case):
    url, server = listener
    tool, named = _cases(url)[case]
    with pytest.raises(ConfigurationError) as caught:
        prepare(tool)
    text = str(caught.value)
    assert named in text
    assert "leads outside the schema" in text
    assert connections(server) == 0


def test_a_remote_meta_schema_is_refused_without_a_connection(listener):
    url, server = listener
    with pytest.raises(ConfigurationError, match="meta-schema"):
        prepare(plain({"$schema": f"{url}/meta.json", "type": "object"}))
    assert connections(server) == 0


def test_the_engine_retrieves_nothing_even_past_the_check(listener, monkeypatch):
    from wymcp.core.schema import _registration

    url, server = listener
    monkeypatch.setattr(_registration, "outside_references", lambda *_, **__: [])
    with pytest.raises(ConfigurationError, match="never fetches a schema"):
        prepare(multi({"x": {"$ref": f"{url}/s.json"}}))
    assert connections(server) == 0


def test_references_inside_the_schema_still_register():
    schema = {
        "type": "object",
        "$defs": {"n": {"type": "integer"}},
        "properties": {
            "a": {"$ref": "#/$defs/n"},
            "b": {"$id": "https://example.com/b.json", "type": "string"},
            "c": {"$ref": "https://example.com/b.json"},
            "d": {"const": {"$ref": "https://example.com/elsewhere"}},
        },
    }
    assert outside_references(schema) == []
    assert prepare(plain(schema)).input_schema == schema
    spec = prepare(multi({"a": {"$ref": "#/properties/b"}, "b": {"type": "string"}}))
    assert set(spec.actions) == {"go"}
