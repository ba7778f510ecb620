"""The arguments of a test client's tools/call (the envelope: tests/core_server)."""

from __future__ import annotations

import pytest

from wymcp.testing._tool_arguments import tool_arguments


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
