"""The declarations beside `Tool`: `Prompt`, its `PromptArgument`s, `Resource`.

The server checks them when it is built and serves them; they live here so tool code
declares everything from `wymcp.core.schema` (the server re-exports them).
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

if TYPE_CHECKING:
    from wymcp.core.schema._context import Context


@attrs.frozen(kw_only=True)
class PromptArgument:
    """One argument of a prompt (always a string on the wire)."""

    name: str
    description: str | None = None
    required: bool = False
    title: str | None = None
    schema: Mapping[str, Any] | None = None
    """Extra JSON Schema keywords the value must meet (e.g. `enum`)."""


class Prompt:
    """Base class of a prompt.

    `render(arguments, ctx)` returns text (one user message), a `Content`,
    a list of messages (text, `Content`, `{"role", "content"}` mappings or
    `(role, content)` pairs), or a whole GetPromptResult mapping.
    """

    name: ClassVar[str]
    title: ClassVar[str | None] = None
    description: ClassVar[str | None] = None
    arguments: ClassVar[Sequence[PromptArgument]] = ()

    async def render(self, arguments: dict[str, str], ctx: Context) -> object:
        """Return the prompt's messages."""
        raise NotImplementedError

    def complete(
        self, argument: str, value: str, context: Mapping[str, str]
    ) -> Sequence[str] | Awaitable[Sequence[str]]:
        """Suggest values for an argument (none by default; may be `async`)."""
        del argument, value, context
        return []


class ResourceNotFoundError(LookupError):
    """Raised by `Resource.read` when the URI names nothing that exists.

    The engine answers exactly as for an unknown URI: -32602 with `data.uri`
    at 2026-07-28, -32002 at the 2025 revisions. The message is not sent.
    """


class Resource:
    """Base class of a resource (set `uri`) or a template (set `uri_template`).

    `read(uri, params, ctx)` returns text (str), bytes (a blob), one contents
    mapping, an embedded-resource `Content`, or a list of those; `params`
    holds the template's variables; it raises `ResourceNotFoundError` when a
    template's URI names nothing that exists. `complete(argument, value, context)`
    suggests values for a template variable.
    """

    name: ClassVar[str]
    uri: ClassVar[str | None] = None
    uri_template: ClassVar[str | None] = None
    title: ClassVar[str | None] = None
    description: ClassVar[str | None] = None
    mime_type: ClassVar[str | None] = None
    size: ClassVar[int | None] = None
    annotations: ClassVar[Mapping[str, Any] | None] = None

    async def read(self, uri: str, params: Mapping[str, str], ctx: Context) -> object:
        """Return the resource's contents."""
        raise NotImplementedError

    def complete(
        self, argument: str, value: str, context: Mapping[str, str]
    ) -> Sequence[str] | Awaitable[Sequence[str]]:
        """Suggest values for a template variable (none by default; may be async)."""
        del argument, value, context
        return []
