"""Adapt a plain (sync or async) callable named by `AUTH` into a token validator.

`AUTH` may name a function `token -> Principal` instead of an object with a
`validate` method; the transport only ever calls `validate`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from wymcp.core.server import Principal


@attrs.frozen
class CallableValidator:
    """A `TokenValidator` whose `validate` calls `function` (awaiting its result)."""

    function: Callable[[str], Any]

    async def validate(self, token: str) -> Principal:
        """Return what `function(token)` returns (or resolves to)."""
        result = self.function(token)
        if inspect.isawaitable(result):
            result = await result
        return result  # type: ignore[no-any-return]
