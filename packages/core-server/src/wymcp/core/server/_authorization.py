"""Who is calling and what they may do: `Principal`, token validators, tool scopes.

A transport authenticates every request with a `TokenValidator` and hands
the engine the `Principal` it returns. A tool declares the OAuth scopes its
actions need in a `scopes` class attribute, checked at registration;
`refuse_call` answers 403 to a `tools/call` whose principal lacks one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

import attrs

from wymcp.core.schema import ToolSpec, required_scopes
from wymcp.core.server._exchange import Exchange, Reply
from wymcp.core.server._jsonrpc import echoable_id

_DESCRIPTION_LIMIT = 200


def _scope_set(value: Iterable[str]) -> frozenset[str]:
    return frozenset(value)


def _read_only(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(value))


@attrs.frozen
class Principal:
    """The caller a token names: its subject, the scopes it grants, its claims.

    Sessions and sealed request state are bound to `subject` (exposed as
    `sub` too), so a refreshed token for the same subject keeps its session.
    `expires_at` (Unix time, or None) is when the token stops being accepted:
    a long-lived stream it opened ends then.
    """

    subject: str
    scopes: frozenset[str] = attrs.field(default=frozenset(), converter=_scope_set)
    claims: Mapping[str, Any] = attrs.field(
        factory=dict, converter=_read_only, hash=False
    )
    expires_at: float | None = None

    @property
    def sub(self) -> str:
        """The subject, the stable identity sessions are bound to."""
        return self.subject

    def missing(self, required: Iterable[str]) -> frozenset[str]:
        """The scopes of `required` this principal was not granted."""
        return frozenset(required) - self.scopes


class InvalidToken(Exception):  # noqa: N818 - RFC 6750's error name, invalid_token
    """A token that cannot be accepted: malformed, forged, expired, or not for us.

    `description` is sent to the client in the `WWW-Authenticate` challenge,
    so it must say what is wrong without quoting the token.
    """

    def __init__(self, description: str = "The access token is invalid.") -> None:
        clean = "".join(c for c in description if c.isprintable() and c not in '"\\')
        self.description = clean[:_DESCRIPTION_LIMIT] or "The access token is invalid."
        super().__init__(self.description)


@runtime_checkable
class TokenValidator(Protocol):
    """Turns a bearer token into a `Principal`, or raises `InvalidToken`."""

    async def validate(self, token: str) -> Principal:
        """Return who `token` names; raise `InvalidToken` if it is not acceptable."""
        ...


def refuse_call(
    exchange: Exchange, tool: Callable[[str], ToolSpec | None]
) -> Reply | None:
    """The 403 for a `tools/call` needing scopes the principal was not granted.

    Read from the message as sent, before any other check: the tool action's
    scopes (its tool-wide ones for an unknown action) plus the challenge's
    `required`. None when the exchange carries no challenge (no `AUTH`), the
    message calls no known tool, or the principal has every scope.
    """
    challenge = exchange.challenge
    principal = exchange.principal
    body = exchange.body
    if challenge is None or not isinstance(principal, Principal):
        return None
    if not isinstance(body, dict) or body.get("method") != "tools/call":
        return None
    params = body.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    spec = tool(name) if isinstance(name, str) else None
    if spec is None:
        return None
    action = None
    arguments = params.get("arguments") if isinstance(params, dict) else None
    if spec.actions and isinstance(arguments, dict):
        sent = arguments.get("action")
        action = sent if isinstance(sent, str) and sent in spec.actions else None
    needed = required_scopes(spec.scopes, action) | challenge.required
    if not principal.missing(needed):
        return None
    return challenge.forbidden(needed, rid=echoable_id(body))
