"""Copy on write: a gate copies an object or array only when a value in it changes.

The data a client sent is never changed in place; a container is copied the first
time one of its members is replaced, and untouched data is returned as it came.
"""

from __future__ import annotations

from typing import Any, TypeVar

C = TypeVar("C", dict[Any, Any], list[Any])


def replaced(result: C, original: C, where: Any, new: object) -> C:
    """`result` with `where` set to `new`; a copy of `original` the first time.

    The gates pass only exact `dict`s and `list`s, whose `copy()` is shallow.
    """
    if result is original:
        result = original.copy()
    result[where] = new
    return result
