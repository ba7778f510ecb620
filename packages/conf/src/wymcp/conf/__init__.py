"""Django-style settings for wymcp: load a settings module, check it, build a server.

`load_settings()` reads the module named by its argument or by
`WYMCP_SETTINGS_MODULE`, and `WYMCP_<NAME>` variables, into a frozen `Settings`;
`run_checks()` reports problems with stable ids; `served_engine()`,
`enter_lifespan()` and `loop_factory()` build, start and loop a server.
"""

from wymcp.conf._checks import published_size, run_checks
from wymcp.conf._command_line import (
    add_settings_option,
    describe_settings,
    engine_for_command,
    print_problems,
    project_on_path,
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
    "CheckMessage",
    "ImproperlyConfigured",
    "LifespanExitError",
    "Settings",
    "add_settings_option",
    "build_engine",
    "describe_settings",
    "engine_for_command",
    "enter_lifespan",
    "load_settings",
    "loop_factory",
    "print_problems",
    "project_on_path",
    "published_size",
    "run_checks",
    "served_engine",
    "settings_for_command",
]
