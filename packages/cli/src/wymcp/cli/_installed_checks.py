"""The checks `wymcp check` runs beside conf's own: those of each installed transport.

conf keeps no registry: the command composes the packages, so it hands their
checks in. Without the `[http]` extra the HTTP transport's are not run.
"""

from __future__ import annotations

from wymcp.cli._needs_http import http_installed
from wymcp.conf import Check


def installed_checks() -> tuple[Check, ...]:
    """The `CHECKS` of each installed package that has its own."""
    if not http_installed():
        return ()
    from wymcp.transport.aiohttp import CHECKS  # noqa: PLC0415 - only if installed

    return CHECKS
