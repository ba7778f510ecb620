"""wymcp.testing: test wymcp tools in-process with pytest.

`call()` runs one call through the engine with a `build_context()` context;
`connect()` gives a `Client` over aiohttp's in-process test server at any
revision; the `assert_*` helpers read an `Answer`; the pytest plugin offers
the `wymcp_client` fixture.
"""

from wymcp.testing._answer import Answer
from wymcp.testing._assertions import (
    assert_refused,
    assert_rpc_error,
    assert_succeeded,
    assert_tool_error,
)
from wymcp.testing._client import Client, RequestHandler, connect
from wymcp.testing._direct_call import call
from wymcp.testing._direct_context import DirectContext, build_context

__all__ = [
    "Answer",
    "Client",
    "DirectContext",
    "RequestHandler",
    "assert_refused",
    "assert_rpc_error",
    "assert_succeeded",
    "assert_tool_error",
    "build_context",
    "call",
    "connect",
]
