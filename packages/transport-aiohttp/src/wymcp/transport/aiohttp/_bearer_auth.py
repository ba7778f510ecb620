"""OAuth 2.1 resource-server admission: the bearer token of every request.

The `AUTH` validator checks it: a missing or invalid token is 401, one without
`AUTH_REQUIRED_SCOPES` 403, each with a `WWW-Authenticate` challenge naming the
RFC 9728 metadata. A tool's own scopes are the engine's, via `BearerChallenge`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

from aiohttp import web

from wymcp.conf import Settings
from wymcp.core.schema import ToolSpec
from wymcp.core.server import (
    INTERNAL_ERROR,
    RETRY_AFTER,
    BearerChallenge,
    InvalidToken,
    Principal,
    TokenValidator,
)
from wymcp.transport.aiohttp._answers import error_response, reply_response
from wymcp.transport.aiohttp._resource_metadata import ResourceMetadata

logger = logging.getLogger("wymcp.transport.aiohttp")

_BEARER = re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr] +([A-Za-z0-9._~+/-]+=*) *")


class BearerAuth:
    """Authenticates requests with the `AUTH` validator."""

    def __init__(self, settings: Settings, validator: TokenValidator) -> None:
        self._validator = validator
        self._required = frozenset(settings.AUTH_REQUIRED_SCOPES)
        self.metadata = ResourceMetadata(settings)

    def challenge(self, request: web.Request) -> BearerChallenge:
        """How refusals of `request` point at a token (and its metadata)."""
        return BearerChallenge(self.metadata.url(request), self._required)

    async def authenticate(self, request: web.Request) -> Principal | web.Response:
        """Return the request's principal, or the 400/401/403/503 answer."""
        token = self._token(request)
        if isinstance(token, web.Response):
            return token
        try:
            principal: object = await self._validator.validate(token)
        except InvalidToken as exc:
            return reply_response(self.challenge(request).unauthorized(exc.description))
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
            return reply_response(self.challenge(request).forbidden(self._required))
        return principal

    def _token(self, request: web.Request) -> str | web.Response:
        values = request.headers.getall("Authorization", [])
        challenge = self.challenge
        if len(values) > 1:
            return reply_response(
                challenge(request).refusal(
                    400,
                    "Bad request: send exactly one Authorization header.",
                    error="invalid_request",
                    description="Send exactly one Authorization header.",
                )
            )
        match = _BEARER.fullmatch(values[0]) if values else None
        if match is None:
            if values and values[0][:7].lower() == "bearer ":
                return reply_response(
                    challenge(request).unauthorized("The access token is malformed.")
                )
            return reply_response(
                challenge(request).refusal(
                    401,
                    "Unauthorized: send an OAuth access token as "
                    "'Authorization: Bearer <token>'. The WWW-Authenticate header "
                    "names the metadata that says where to get one.",
                    scope=self._required,
                )
            )
        return match.group(1)

    def scopes_supported(self, specs: Iterable[ToolSpec]) -> list[str]:
        """Every scope the settings and the served tools name, sorted."""
        found = set(self._required)
        for spec in specs:
            for scopes in spec.scopes.values():
                found |= scopes
        return sorted(found)

    @staticmethod
    def _unavailable() -> web.Response:
        return error_response(
            503,
            INTERNAL_ERROR,
            "Service unavailable: the access token could not be checked. Retry later.",
            headers={"Retry-After": str(RETRY_AFTER)},
        )
