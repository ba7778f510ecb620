"""The public surface of wymcp.conf is exactly this list (isort-style order, RUF022)."""

from __future__ import annotations

import wymcp.conf


def test_the_facade_exports_a_sorted_pinned_list():
    assert wymcp.conf.__all__ == [
        "ENVIRONMENT_VARIABLE",
        "Check",
        "CheckMessage",
        "ImproperlyConfigured",
        "LifespanExitError",
        "Serving",
        "Settings",
        "build_engine",
        "describe_settings",
        "engine_for_command",
        "enter_lifespan",
        "is_loopback",
        "load_settings",
        "loop_factory",
        "print_problems",
        "published_size",
        "run_checks",
        "served_engine",
        "settings_for_command",
    ]
    for name in wymcp.conf.__all__:
        assert getattr(wymcp.conf, name) is not None
