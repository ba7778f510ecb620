"""The public surface of wymcp.testing is exactly this list (isort order, RUF022)."""

from __future__ import annotations

import wymcp.testing


def test_the_facade_exports_a_sorted_pinned_list():
    assert wymcp.testing.__all__ == [
        "Answer",
        "Client",
        "DirectContext",
        "RequestHandler",
        "assert_refused",
        "assert_rpc_error",
        "assert_succeeded",
        "assert_tool_error",
        "build_context",
        "call",
        "connect",
    ]
    for name in wymcp.testing.__all__:
        assert getattr(wymcp.testing, name) is not None
