"""A client's envelope: the 2026 `_meta`, mirrored and session headers, messages."""

from __future__ import annotations

from wymcp.core.schema import HeaderAnnotation
from wymcp.core.server import (
    error_message,
    mirrored_headers,
    request_message,
    request_meta,
    session_headers,
)


def test_the_meta_carries_the_version_and_capabilities_over_any_extra():
    meta = request_meta(
        capabilities={"roots": {}},
        client_info=None,
        log_level="info",
        extra={"progressToken": 3, "io.modelcontextprotocol/protocolVersion": "x"},
    )
    assert meta == {
        "progressToken": 3,
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
        "io.modelcontextprotocol/logLevel": "info",
    }


def test_headers_mirror_the_method_name_and_annotated_arguments():
    annotations = [
        HeaderAnnotation("Region", ("region",), "string"),
        HeaderAnnotation("Count", ("opts", "count"), "integer"),
        HeaderAnnotation("Flag", ("flag",), "boolean"),
        HeaderAnnotation("Absent", ("absent",), "string"),
    ]
    params = {
        "name": "wéather",
        "arguments": {"region": " north", "opts": {"count": 2.0}, "flag": False},
    }
    assert mirrored_headers("tools/call", params, annotations) == [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "=?base64?d8OpYXRoZXI=?="),
        ("Mcp-Param-Region", "=?base64?IG5vcnRo?="),
        ("Mcp-Param-Count", "2"),
        ("Mcp-Param-Flag", "false"),
    ]
    assert mirrored_headers("resources/read", {"uri": "file:///a"}) == [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "resources/read"),
        ("Mcp-Name", "file:///a"),
    ]
    assert mirrored_headers("tools/list", {}) == [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ]


def test_a_missing_or_unsendable_argument_sends_no_header():
    annotations = [
        HeaderAnnotation("Deep", ("a", "b"), "string"),
        HeaderAnnotation("Ratio", ("ratio",), "integer"),
        HeaderAnnotation("Nothing", ("nothing",), "string"),
    ]
    params = {"name": "t", "arguments": {"a": "flat", "ratio": 0.5, "nothing": None}}
    assert mirrored_headers("tools/call", params, annotations) == [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "t"),
    ]


def test_annotations_apply_to_tools_call_only():
    annotation = [HeaderAnnotation("Region", ("region",), "string")]
    params = {"name": "p", "arguments": {"region": "north"}}
    assert ("Mcp-Param-Region", "north") not in mirrored_headers(
        "prompts/get", params, annotation
    )


def test_session_headers_carry_the_id_once_there_is_one():
    assert session_headers("2025-06-18", None) == {"MCP-Protocol-Version": "2025-06-18"}
    assert session_headers("2025-06-18", "s1") == {
        "MCP-Protocol-Version": "2025-06-18",
        "Mcp-Session-Id": "s1",
    }


def test_messages_a_client_and_a_transport_send():
    assert request_message(7, "tools/list", {}) == {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/list",
        "params": {},
    }
    assert "params" not in request_message("a", "ping")
    assert error_message(None, -32700, "Parse error: x") == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: x"},
    }
