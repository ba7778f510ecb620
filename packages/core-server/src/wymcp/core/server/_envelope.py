"""What a client puts around a request: the 2026-07-28 `_meta` and mirrored headers.

The engine reads them (`_revision`, `_stateless_mirror`); the clients of `wymcp.testing`
and the operator commands build them here, so both sides spell them alike.
At the 2025 revisions the session headers do that job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from wymcp.core.schema import HeaderAnnotation, encode_header_value
from wymcp.core.server._header_names import (
    METHOD_HEADER,
    NAME_HEADER,
    PARAM_HEADER_PREFIX,
    SESSION_HEADER,
    VERSION_HEADER,
)
from wymcp.core.server._revision import (
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_VERSION,
    MODERN,
)
from wymcp.core.server._stateless_mirror import NAMED_METHODS, value_at


def request_meta(
    *,
    capabilities: Mapping[str, Any],
    client_info: Mapping[str, Any] | None = None,
    log_level: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The `params._meta` every 2026-07-28 request carries (over any `extra`)."""
    meta: dict[str, Any] = dict(extra or {})
    meta[META_VERSION] = MODERN
    meta[META_CAPABILITIES] = dict(capabilities)
    if client_info is not None:
        meta[META_CLIENT_INFO] = dict(client_info)
    if log_level is not None:
        meta[META_LOG_LEVEL] = log_level
    return meta


def _header_value(value: object) -> str | None:
    if isinstance(value, bool | int | str):
        return encode_header_value(value)
    if isinstance(value, float) and value.is_integer():
        return encode_header_value(int(value))
    return None


def mirrored_headers(
    method: str,
    params: Mapping[str, Any],
    annotations: Iterable[HeaderAnnotation] = (),
) -> list[tuple[str, str]]:
    """The 2026-07-28 headers that mirror the body of a request.

    `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` for a named method, and
    one `Mcp-Param-<Name>` per annotated argument present in a tools/call.
    """
    headers = [(VERSION_HEADER, MODERN), (METHOD_HEADER, method)]
    field = NAMED_METHODS.get(method)
    name = params.get(field) if field is not None else None
    if isinstance(name, str):
        headers.append((NAME_HEADER, encode_header_value(name)))
    arguments = params.get("arguments")
    if method != "tools/call" or not isinstance(arguments, Mapping):
        return headers
    for annotation in annotations:
        value = _header_value(value_at(arguments, annotation.path))
        if value is not None:
            headers.append((PARAM_HEADER_PREFIX + annotation.header, value))
    return headers


def session_headers(version: str, session_id: str | None) -> dict[str, str]:
    """The headers of a request in a 2025 session (before it has an id: the version)."""
    headers = {VERSION_HEADER: version}
    if session_id is not None:
        headers[SESSION_HEADER] = session_id
    return headers
