"""Django-style settings for wymcp: load a settings module, check it, build a server.

`load_settings()` reads the module (or `WYMCP_SETTINGS_MODULE`) and `WYMCP_<NAME>`
variables into a frozen `Settings`; `run_checks()` reports problems with stable ids
(conf's, then each package's `Check`s handed in); `served_engine()`, `enter_lifespan()`
and `loop_factory()` build, start and loop a server (every transport the same way).
"""

from wymcp.conf._checks import Check, Serving, is_loopback, published_size, run_checks
from wymcp.conf._command_line import (
    describe_settings,
    engine_for_command,
    print_problems,
    settings_for_command,
)
from wymcp.conf._engine import build_engine
from wymcp.conf._lifespan import LifespanExitError, enter_lifespan
from wymcp.conf._loading import ENVIRONMENT_VARIABLE, load_settings
from wymcp.conf._loop import loop_factory
from wymcp.conf._problems import CheckMessage, ImproperlyConfigured
from wymcp.conf._served import served_engine
from wymcp.conf._settings import Settings

__all__ = [
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
