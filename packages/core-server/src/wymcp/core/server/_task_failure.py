"""`TaskFailedError`: a tool ending its call with a JSON-RPC (protocol) error.

In a task the task ends `failed` with that error; outside one the call
answers the error itself.
"""

from __future__ import annotations

from typing import Any

from wymcp.core.server._jsonrpc import RpcError

_MESSAGE_LIMIT = 500


class TaskFailedError(Exception):
    """Raise from a tool to end its call with a JSON-RPC error, not `isError`."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message[:_MESSAGE_LIMIT])
        self.code = code
        self.message = message[:_MESSAGE_LIMIT]
        self.data = data

    def to_json(self) -> dict[str, Any]:
        """The JSON-RPC error object (`code`, `message`, `data` when given)."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def rpc_error(self) -> RpcError:
        """The same error as a JSON-RPC answer to the request."""
        return RpcError(self.code, self.message, self.data)
