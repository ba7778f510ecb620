"""The envelope of a request at each revision: `_meta`, mirrored headers, arguments.

At 2026-07-28 every request carries the protocol version and client
capabilities in `params._meta` and mirrors its method, name and annotated
arguments in headers; at the 2025 revisions the session headers do that job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from wymcp.core.schema import HeaderAnnotation, encode_header_value
from wymcp.core.server import MODERN

META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
NAMED: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
CLIENT_INFO: Final = {"name": "wymcp-testing", "version": "0.1.0"}


def tool_arguments(
    action: str | None,
    data: Mapping[str, Any] | None,
    arguments: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The `arguments` of a tools/call: `{action, data}`, or `arguments` as given.

    A multi-action call without data sends no `data` key (the server reads
    `{}`); a plain tool takes `data` (or `arguments`) as its whole arguments.
    """
    if arguments is not None:
        if action is not None or data is not None:
            raise TypeError("pass either action/data or arguments, not both")
        return dict(arguments)
    if action is None:
        return dict(data or {})
    shaped: dict[str, Any] = {"action": action}
    if data is not None:
        shaped["data"] = data
    return shaped


def modern_meta(
    *,
    capabilities: Mapping[str, Any],
    client_info: Mapping[str, Any] | None,
    log_level: str | None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The `params._meta` every 2026-07-28 request carries."""
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


def _value_at(arguments: Mapping[str, Any], path: Iterable[str]) -> object:
    value: object = arguments
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


def mirrored_headers(
    method: str,
    params: Mapping[str, Any],
    annotations: Iterable[HeaderAnnotation] = (),
) -> list[tuple[str, str]]:
    """The 2026-07-28 headers that mirror the body of a request.

    `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` for a named method, and
    one `Mcp-Param-<Name>` per annotated argument present in a tools/call.
    """
    headers = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)]
    field = NAMED.get(method)
    name = params.get(field) if field is not None else None
    if isinstance(name, str):
        headers.append(("Mcp-Name", encode_header_value(name)))
    arguments = params.get("arguments")
    if method != "tools/call" or not isinstance(arguments, Mapping):
        return headers
    for annotation in annotations:
        value = _header_value(_value_at(arguments, annotation.path))
        if value is not None:
            headers.append((f"Mcp-Param-{annotation.header}", value))
    return headers
