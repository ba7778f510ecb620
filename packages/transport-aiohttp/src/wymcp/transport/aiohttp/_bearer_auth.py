"""OAuth 2.1 resource-server checks: the bearer token and the scopes of a call.

Every request's `Authorization: Bearer` token goes to the `AUTH` validator;
a missing or invalid token is answered 401 and a missing scope 403, each
with a `WWW-Authenticate` challenge pointing at the RFC 9728 metadata and
naming every scope the request needs (`docs/authorization.md`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

from aiohttp import web

from wymcp.conf import Settings
from wymcp.core.schema import ToolSpec, required_scopes
from wymcp.core.server import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    RETRY_AFTER,
    InvalidToken,
    Principal,
    TokenValidator,
)
from wymcp.transport.aiohttp._answers import echoable_id, error_response
from wymcp.transport.aiohttp._resource_metadata import ResourceMetadata

logger = logging.getLogger("wymcp.transport.aiohttp")

_BEARER = re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr] +([A-Za-z0-9._~+/-]+=*) *")
_UNQUOTABLE = re.compile(r'["\\\x00-\x1f\x7f]')


def _quoted(value: str) -> str:
    return '"' + _UNQUOTABLE.sub("", value) + '"'


def _challenge(params: Mapping[str, str]) -> str:
    return "Bearer " + ", ".join(
        f"{key}={_quoted(value)}" for key, value in params.items()
    )


class BearerAuth:
    """Authenticates requests with the `AUTH` validator and checks call scopes."""

    def __init__(self, settings: Settings, validator: TokenValidator) -> None:
        self._validator = validator
        self._required = frozenset(settings.AUTH_REQUIRED_SCOPES)
        self.metadata = ResourceMetadata(settings)

    async def authenticate(self, request: web.Request) -> Principal | web.Response:
        """Return the request's principal, or the 400/401/403/503 answer."""
        token = self._token(request)
        if isinstance(token, web.Response):
            return token
        try:
            principal: object = await self._validator.validate(token)
        except InvalidToken as exc:
            return self._unauthorized(request, exc.description)
        except Exception:
            logger.exception("wymcp: the AUTH token validator failed")
            return self._unavailable()
        if not isinstance(principal, Principal):
            logger.error(
                "wymcp: the AUTH token validator returned %s, not a Principal",
                type(principal).__name__,
            )
            return self._unavailable()
        if principal.missing(self._required):
            return self._forbidden(request, self._required)
        return principal

    def _token(self, request: web.Request) -> str | web.Response:
        values = request.headers.getall("Authorization", [])
        if len(values) > 1:
            return self._refuse(
                request,
                400,
                "Bad request: send exactly one Authorization header.",
                error="invalid_request",
                description="Send exactly one Authorization header.",
            )
        match = _BEARER.fullmatch(values[0]) if values else None
        if match is None:
            if values and values[0][:7].lower() == "bearer ":
                return self._unauthorized(request, "The access token is malformed.")
            return self._refuse(
                request,
                401,
                "Unauthorized: send an OAuth access token as "
                "'Authorization: Bearer <token>'. The WWW-Authenticate header "
                "names the metadata that says where to get one.",
                scope=self._required,
            )
        return match.group(1)

    def check_call(
        self,
        request: web.Request,
        principal: Principal,
        body: Any,
        specs: Iterable[ToolSpec],
    ) -> web.Response | None:
        """Return a 403 if `body` calls a tool action the principal lacks scopes for."""
        if not isinstance(body, dict) or body.get("method") != "tools/call":
            return None
        params = body.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        if not isinstance(name, str):
            return None
        spec = next((spec for spec in specs if spec.name == name), None)
        if spec is None:
            return None
        action = None
        arguments = params.get("arguments") if isinstance(params, dict) else None
        if spec.actions and isinstance(arguments, dict):
            sent = arguments.get("action")
            action = sent if isinstance(sent, str) and sent in spec.actions else None
        needed = required_scopes(spec.scopes, action) | self._required
        if not principal.missing(needed):
            return None
        return self._forbidden(request, needed, rid=echoable_id(body))

    def scopes_supported(self, specs: Iterable[ToolSpec]) -> list[str]:
        """Every scope the settings and the served tools name, sorted."""
        found = set(self._required)
        for spec in specs:
            for scopes in spec.scopes.values():
                found |= scopes
        return sorted(found)

    def expired(self, request: web.Request) -> web.Response:
        """The 401 for a token that expired while its request waited."""
        return self._unauthorized(request, "The access token has expired.")

    def _unauthorized(self, request: web.Request, description: str) -> web.Response:
        return self._refuse(
            request,
            401,
            f"Unauthorized: {description} Get a new token from the authorization "
            "server named by the metadata in WWW-Authenticate.",
            error="invalid_token",
            description=description,
            scope=self._required,
        )

    def _forbidden(
        self, request: web.Request, needed: frozenset[str], *, rid: Any = None
    ) -> web.Response:
        scopes = " ".join(sorted(needed))
        return self._refuse(
            request,
            403,
            f"Forbidden: this request needs the scopes {scopes}. Ask the "
            "authorization server for a token with all of them.",
            error="insufficient_scope",
            description=f"This request needs the scopes: {scopes}.",
            scope=needed,
            rid=rid,
        )

    def _refuse(
        self,
        request: web.Request,
        status: int,
        message: str,
        *,
        error: str | None = None,
        description: str | None = None,
        scope: frozenset[str] = frozenset(),
        rid: Any = None,
    ) -> web.Response:
        params = {"resource_metadata": self.metadata.url(request)}
        if error is not None:
            params["error"] = error
        if description is not None:
            params["error_description"] = description
        if scope:
            params["scope"] = " ".join(sorted(scope))
        return error_response(
            status,
            INVALID_REQUEST,
            message,
            rid=rid,
            headers={"WWW-Authenticate": _challenge(params)},
        )

    @staticmethod
    def _unavailable() -> web.Response:
        return error_response(
            503,
            INTERNAL_ERROR,
            "Service unavailable: the access token could not be checked. Retry later.",
            headers={"Retry-After": str(RETRY_AFTER)},
        )
