"""E018: `METRICS_PATH` naming a path the server already routes.

The MCP endpoint (`PATH`) and the probes (`/healthz`, `/readyz`) are routed
first: metrics there would never be served, or `wymcp serve` fails at start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from wymcp.conf._problems import ERROR, CheckMessage, echo_limit

if TYPE_CHECKING:
    from wymcp.conf._settings import Settings

METRICS_PATH_TAKEN: Final = "wymcp.E018"
PROBE_PATHS: Final = ("/healthz", "/readyz")
"""The health probes' paths (the transport's `LIVE_PATH`, `READY_PATH`)."""


def metrics_path_problems(settings: Settings) -> list[CheckMessage]:
    """E018 when METRICS is on and METRICS_PATH is PATH or a probe's path."""
    if not settings.METRICS:
        return []
    path = settings.METRICS_PATH
    taken = {settings.PATH: "PATH (the MCP endpoint)"}
    taken.update(dict.fromkeys(PROBE_PATHS, "a health probe"))
    owner = taken.get(path)
    if owner is None:
        return []
    return [
        CheckMessage(
            ERROR,
            METRICS_PATH_TAKEN,
            f"METRICS_PATH {path[: echo_limit()]!r} is already {owner}'s path, so "
            "the metrics could not be served there.",
            'Give the metrics a path of their own, e.g. METRICS_PATH = "/metrics".',
        )
    ]
