"""A ready token validator for JWT access tokens (pyjwt; the `[jwt]` extra).

It checks the signature against a fixed key or the issuer's JWKS, `exp`
(and `nbf`/`iat` when present), the issuer, and the audience: only tokens
issued for this resource (RFC 8707) are accepted. Scopes come from `scope`
(space-separated, RFC 9068) or `scp` (a list or a string).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wymcp.core.server._authorization import InvalidToken, Principal

if TYPE_CHECKING:
    import jwt

_DEFAULT_ALGORITHMS = ("RS256", "ES256")
_REQUIRED_CLAIMS = ("exp", "iss", "aud", "sub")
_TIME_CLAIMS = ("exp", "nbf", "iat")
_KEY_LIFESPAN = 300.0


def _import_jwt() -> Any:
    try:
        import jwt  # noqa: PLC0415 - an optional dependency, loaded when used
    except ImportError:
        raise ImportError(
            "JwtValidator needs pyjwt with its crypto extra: "
            "pip install 'wymcp-core-server[jwt]'"
        ) from None
    return jwt


def _check_times(claims: Mapping[str, Any], leeway: float) -> None:
    """Refuse a time claim that is not a JSON number, then check the time window.

    RFC 7519 NumericDate only. pyjwt reads `"exp": "1700000000"` as a number,
    and before 2.15 raised `TypeError` on `"iat": [1]`; so wymcp checks the
    types and the window itself, the same at every pyjwt the `[jwt]` extra
    allows. A string `exp` would lose the principal's expiry, and a stream
    opened with the token would outlive it: the token is refused instead.
    """
    for name in _TIME_CLAIMS:
        if name not in claims:
            continue
        value = claims[name]
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise InvalidToken(f"The access token's {name} claim is not a number.")
    now = time.time()
    if claims["exp"] <= now - leeway:
        raise InvalidToken("The access token has expired.")
    if claims.get("nbf", now) > now + leeway or claims.get("iat", now) > now + leeway:
        raise InvalidToken("The access token is not valid yet.")


def _scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    found: set[str] = set()
    for name in ("scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            found.update(value.split())
        elif isinstance(value, list):
            found.update(item for item in value if isinstance(item, str))
    return frozenset(found)


class JwtValidator:
    """Validate JWT bearer tokens issued by `issuer` for `audience`.

    Give exactly one of `key` (a PEM public key, a key object, or a shared
    secret for HS256) or `jwks_url` (the issuer's JSON Web Key Set, fetched
    in a worker thread and cached). `leeway` is the clock skew allowed, in
    seconds. Every failure raises `InvalidToken` with a reason the client
    may read; an unreachable JWKS raises `ConnectionError` (answered 503).
    """

    def __init__(
        self,
        *,
        issuer: str,
        audience: str | Sequence[str],
        key: Any = None,
        jwks_url: str | None = None,
        algorithms: Sequence[str] = _DEFAULT_ALGORITHMS,
        leeway: float = 30.0,
    ) -> None:
        self._jwt = _import_jwt()
        if (key is None) == (jwks_url is None):
            raise ValueError("JwtValidator needs exactly one of key= or jwks_url=.")
        if not issuer:
            raise ValueError("JwtValidator needs the issuer= its tokens name.")
        audiences: list[object] = (
            [audience] if isinstance(audience, str) else list(audience)
        )
        if not audiences or not all(isinstance(a, str) and a for a in audiences):
            raise ValueError(
                "JwtValidator needs the audience= its tokens are issued for "
                "(this server's resource identifier, AUTH_RESOURCE)."
            )
        if not algorithms or "none" in {a.lower() for a in algorithms}:
            raise ValueError("JwtValidator needs signing algorithms, never 'none'.")
        symmetric = [a for a in algorithms if a.upper().startswith("HS")]
        if symmetric and (jwks_url is not None or not isinstance(key, str | bytes)):
            raise ValueError(
                "JwtValidator: HS algorithms need key= as a shared secret (str or "
                "bytes); use RS/ES/PS algorithms with public keys."
            )
        self.issuer = issuer
        self.audience = audiences
        self.algorithms = list(algorithms)
        self.leeway = leeway
        self._key = key
        self._keys: dict[str, tuple[Any, float]] = {}
        self._jwks: jwt.PyJWKClient | None = (
            self._jwt.PyJWKClient(jwks_url, cache_keys=True, lifespan=300, timeout=10)
            if jwks_url is not None
            else None
        )

    async def validate(self, token: str) -> Principal:
        """Return the token's principal, or raise `InvalidToken` saying why."""
        jwt = self._jwt
        key = self._key if self._jwks is None else await self._jwks_key(token)
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=self.algorithms,
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                # the time claims are checked by _check_times, at every pyjwt
                options={
                    "require": list(_REQUIRED_CLAIMS),
                    "verify_exp": False,
                    "verify_nbf": False,
                    "verify_iat": False,
                },
            )
        except jwt.PyJWTError as exc:
            raise InvalidToken(self._reason(exc)) from None
        _check_times(claims, self.leeway)
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise InvalidToken("The access token names no subject.")
        return Principal(
            subject,
            _scopes(claims),
            claims,
            expires_at=float(claims["exp"]) + self.leeway,
        )

    async def _jwks_key(self, token: str) -> Any:
        """The issuer's key named by the token's `kid`: remembered, else fetched.

        A key once resolved is used without a thread hop for `_KEY_LIFESPAN`
        seconds; pyjwt's client refetches the set for an unknown `kid` at most
        once per cooldown, so made-up `kid`s cannot hammer the issuer.
        """
        jwt = self._jwt
        try:
            kid = jwt.get_unverified_header(token).get("kid")
        except jwt.PyJWTError:
            raise InvalidToken("The access token is not a well-formed JWT.") from None
        remembered = self._keys.get(kid) if isinstance(kid, str) else None
        if remembered is not None and time.monotonic() - remembered[1] < _KEY_LIFESPAN:
            return remembered[0]
        assert self._jwks is not None  # noqa: S101 - only called with a JWKS
        try:
            signing = await asyncio.to_thread(
                self._jwks.get_signing_key_from_jwt, token
            )
        except jwt.PyJWKClientConnectionError as exc:
            raise ConnectionError("the issuer's JWKS cannot be fetched") from exc
        except (jwt.PyJWKClientError, jwt.PyJWTError):
            raise InvalidToken(
                "The access token is not signed by a key of the issuer."
            ) from None
        if isinstance(kid, str):
            self._keys[kid] = (signing.key, time.monotonic())
        return signing.key

    def _reason(self, error: Exception) -> str:  # noqa: PLR0911 - one text per failure
        jwt = self._jwt
        if isinstance(error, jwt.InvalidAudienceError):
            return "The access token was not issued for this resource."
        if isinstance(error, jwt.InvalidIssuerError):
            return "The access token was not issued by the expected issuer."
        if isinstance(error, jwt.MissingRequiredClaimError):
            return f"The access token lacks the {error.claim} claim."
        if isinstance(error, jwt.InvalidSignatureError):
            return "The access token's signature does not verify."
        if isinstance(error, jwt.InvalidAlgorithmError):
            return "The access token is signed with an algorithm not accepted."
        if isinstance(error, jwt.DecodeError):
            return "The access token is not a well-formed JWT."
        return "The access token is invalid."
