"""The public surface of wymcp.conf is exactly this sorted list."""

from __future__ import annotations

import wymcp.conf


def test_the_facade_exports_a_sorted_pinned_list():
    assert wymcp.conf.__all__ == [
        "ENVIRONMENT_VARIABLE",
        "CheckMessage",
        "ImproperlyConfigured",
        "Settings",
        "build_engine",
        "load_settings",
        "run_checks",
    ]
    assert wymcp.conf.__all__ == sorted(wymcp.conf.__all__)
    for name in wymcp.conf.__all__:
        assert getattr(wymcp.conf, name) is not None
