"""The echo bound: the most characters of a request any answer or error quotes.

A key, a path, a name, a URI sent by a caller is cut at `ECHO_LIMIT` wherever
it is repeated. Defined once here, the lowest layer that cuts one; the gates
(`wymcp.core.gates.ECHO_LIMIT`) and the engine re-export it.
"""

from __future__ import annotations

from typing import Final

ECHO_LIMIT: Final = 120
"""Longest piece of a request (a key, a path, a name, a URI) a text may quote."""
