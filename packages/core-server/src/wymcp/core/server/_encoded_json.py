"""`EncodedJSON`: a JSON value written once, spliced as is into every answer.

A task's result is encoded when the task ends and kept as these bytes: each
`tasks/get` copies them into its answer instead of encoding the value again.
"""

from __future__ import annotations

import json
from typing import Any


class EncodedJSON:
    """Compact UTF-8 JSON text that `encode_json` writes as it is.

    Only text `encode_json` wrote belongs here: it is never checked again.
    A plain class (not attrs): fast encoders must not take it for a record.
    """

    __slots__ = ("__weakref__", "data")

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __len__(self) -> int:
        return len(self.data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EncodedJSON) and other.data == self.data

    def __hash__(self) -> int:
        return hash(self.data)

    def __repr__(self) -> str:
        return f"EncodedJSON(<{len(self.data)} bytes>)"

    def value(self) -> Any:
        """The JSON value decoded (for tests and tools; answers never need it)."""
        return json.loads(self.data)
