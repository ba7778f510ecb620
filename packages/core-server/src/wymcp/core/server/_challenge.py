"""The `WWW-Authenticate: Bearer` challenge of a refused request (RFC 6750 §3).

The transport that authenticated a request makes one (it knows where the RFC
9728 metadata is served) and hands it to the engine on the `Exchange`, so the
transport's 401/403 and the engine's (a tool's scope, an expired token) agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import attrs

from wymcp.core.server._exchange import Reply
from wymcp.core.server._jsonrpc import INVALID_REQUEST, error_message

_UNQUOTABLE = re.compile(r'["\\\x00-\x1f\x7f]')


def _quoted(value: str) -> str:
    return '"' + _UNQUOTABLE.sub("", value) + '"'


def _scope_set(value: Iterable[str]) -> frozenset[str]:
    return frozenset(value)


@attrs.frozen
class BearerChallenge:
    """How refusals of one request point at a token: metadata URL, base scopes.

    `resource_metadata` is the URL of this resource's RFC 9728 metadata;
    `required` the scopes every request needs (`AUTH_REQUIRED_SCOPES`).
    """

    resource_metadata: str
    required: frozenset[str] = attrs.field(default=frozenset(), converter=_scope_set)

    def header(
        self,
        *,
        error: str | None = None,
        description: str | None = None,
        scope: frozenset[str] = frozenset(),
    ) -> str:
        """The `WWW-Authenticate` value: quoted, control characters dropped."""
        params = {"resource_metadata": self.resource_metadata}
        if error is not None:
            params["error"] = error
        if description is not None:
            params["error_description"] = description
        if scope:
            params["scope"] = " ".join(sorted(scope))
        return "Bearer " + ", ".join(
            f"{key}={_quoted(value)}" for key, value in params.items()
        )

    def refusal(
        self,
        status: int,
        message: str,
        *,
        error: str | None = None,
        description: str | None = None,
        scope: frozenset[str] = frozenset(),
        rid: str | int | None = None,
    ) -> Reply:
        """A JSON-RPC -32600 answer with `status` and this challenge."""
        header = self.header(error=error, description=description, scope=scope)
        return Reply(
            status,
            error_message(rid, INVALID_REQUEST, message),
            {"WWW-Authenticate": header},
        )

    def unauthorized(self, description: str) -> Reply:
        """The 401 for a token that is invalid (or expired): `invalid_token`."""
        return self.refusal(
            401,
            f"Unauthorized: {description} Get a new token from the authorization "
            "server named by the metadata in WWW-Authenticate.",
            error="invalid_token",
            description=description,
            scope=self.required,
        )

    def forbidden(
        self, needed: frozenset[str], *, rid: str | int | None = None
    ) -> Reply:
        """The 403 for a token lacking scopes: names every scope `needed`."""
        scopes = " ".join(sorted(needed))
        return self.refusal(
            403,
            f"Forbidden: this request needs the scopes {scopes}. Ask the "
            "authorization server for a token with all of them.",
            error="insufficient_scope",
            description=f"This request needs the scopes: {scopes}.",
            scope=needed,
            rid=rid,
        )
