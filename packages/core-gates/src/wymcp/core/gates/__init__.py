"""The dispatch gates: unknown action, unknown keys, required, values, then defaults.

`check` passes one call through every gate and returns a `Verdict` whose refusal
is bounded whatever the call carried.
"""

from wymcp.core.gates._arguments import arguments_refusal
from wymcp.core.gates._check import check, check_fast
from wymcp.core.gates._paths import render_path
from wymcp.core.gates._plain_refusal import plain_refusal
from wymcp.core.gates._refusal import help_pointer
from wymcp.core.gates._unreadable_refusal import unreadable_refusal
from wymcp.core.gates._verdict import Verdict
from wymcp.core.schema import ECHO_LIMIT

__all__ = [
    "ECHO_LIMIT",
    "Verdict",
    "arguments_refusal",
    "check",
    "check_fast",
    "help_pointer",
    "plain_refusal",
    "render_path",
    "unreadable_refusal",
]
