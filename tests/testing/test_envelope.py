"""The request envelope: arguments, the 2026 `_meta`, the mirrored headers."""

from __future__ import annotations

import pytest

from wymcp.core.schema import HeaderAnnotation
from wymcp.testing._envelope import mirrored_headers, modern_meta, tool_arguments


def test_arguments_of_an_action_a_plain_tool_and_raw_arguments():
    assert tool_arguments("place", {"a": 1}, None) == {
        "action": "place",
        "data": {"a": 1},
    }
    assert tool_arguments("list", None, None) == {"action": "list"}
    assert tool_arguments(None, {"region": "n"}, None) == {"region": "n"}
    assert tool_arguments(None, None, {"tool": "x"}) == {"tool": "x"}
    with pytest.raises(TypeError):
        tool_arguments("place", None, {"action": "place"})


def test_the_meta_carries_the_version_and_capabilities_over_any_extra():
    meta = modern_meta(
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
