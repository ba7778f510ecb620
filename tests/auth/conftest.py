"""A test issuer that signs real JWTs, scoped tools, and an authenticated app."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

import jwt
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from modern_post import modern_post
from wymcp.core.schema import Action, Tool
from wymcp.transport.aiohttp import JwtValidator, create_app

ISSUER = "https://auth.example.com"
RESOURCE = "http://127.0.0.1/mcp"
LEGACY = "2025-11-25"


class Issuer:
    """Signs access tokens with its own freshly generated key."""

    def __init__(self, *, kind: str = "rsa", kid: str = "k1") -> None:
        if kind == "rsa":
            self.private_key: Any = rsa.generate_private_key(
                public_exponent=65537, key_size=2048
            )
            self.algorithm = "RS256"
        else:
            self.private_key = ec.generate_private_key(ec.SECP256R1())
            self.algorithm = "ES256"
        self.public_key = self.private_key.public_key()
        self.kid = kid

    def token(
        self,
        subject: str = "alice",
        scope: str | None = "",
        *,
        lifetime: float = 300,
        **claims: Any,
    ) -> str:
        now = int(time.time())
        payload: dict[str, Any] = {
            "iss": ISSUER,
            "aud": RESOURCE,
            "sub": subject,
            "iat": now,
            "exp": now + int(lifetime),
        }
        if scope is not None:
            payload["scope"] = scope
        payload.update(claims)
        payload = {key: value for key, value in payload.items() if value is not None}
        return jwt.encode(
            payload,
            self.private_key,
            algorithm=self.algorithm,
            headers={"kid": self.kid},
        )

    def jwks(self) -> dict[str, Any]:
        jwk = json.loads(
            jwt.algorithms.get_default_algorithms()[self.algorithm].to_jwk(
                self.public_key
            )
        )
        jwk.update({"kid": self.kid, "use": "sig", "alg": self.algorithm})
        return {"keys": [jwk]}

    def validator(self, **options: Any) -> JwtValidator:
        return JwtValidator(
            issuer=ISSUER, audience=RESOURCE, key=self.public_key, **options
        )


@pytest.fixture(scope="session")
def issuer() -> Issuer:
    """The trusted test issuer (RSA)."""
    return Issuer()


@pytest.fixture
def make_issuer() -> type[Issuer]:
    """Make other issuers: `make_issuer(kind="ec", kid="k2")`."""
    return Issuer


class Tasks(Tool):
    """A tool needing tasks:read for everything and tasks:admin to delete."""

    name = "tasks"
    description = "Track tasks."
    scopes = {"*": ["tasks:read"], "delete": ["tasks:admin"]}  # noqa: RUF012 - the pinned declaration style
    actions = {  # noqa: RUF012 - the pinned declaration style
        "list": Action(description="List the tasks", properties={}),
        "delete": Action(
            description="Delete a task",
            properties={"id": {"type": "integer"}},
            required=["id"],
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        principal = ctx.principal
        return {
            "action": action,
            "subject": principal.subject,
            "scopes": sorted(principal.scopes),
        }


class Whoami(Tool):
    """A plain tool with no scopes of its own."""

    name = "whoami"
    description = "Say who is calling."
    input_schema = {"type": "object", "properties": {}}  # noqa: RUF012 - the pinned declaration style

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return {"subject": ctx.principal.subject, "claims": dict(ctx.principal.claims)}


MakeClient = Callable[..., Awaitable[TestClient[Any, Any]]]


@pytest.fixture
def auth_client(aiohttp_client: Any, issuer: Issuer) -> MakeClient:
    """Return a factory: settings overrides in, a client of an authenticated app out."""

    async def make(**overrides: Any) -> TestClient[Any, Any]:
        settings: dict[str, Any] = {
            "TOOLS": [Tasks, Whoami],
            "AUTH": issuer.validator(),
            "AUTH_AUTHORIZATION_SERVERS": [ISSUER],
            "AUTH_RESOURCE": RESOURCE,
            "STATE_SECRET": "s" * 32,
        }
        settings.update(overrides)
        app: web.Application = create_app(**settings)
        return await aiohttp_client(app)

    return make


@pytest.fixture
def modern_request() -> Callable[..., tuple[str, dict[str, str]]]:
    """`modern_request(method, params, token=...)` -> (body, headers)."""
    return modern_post


@pytest.fixture
def tool_call() -> Callable[..., dict[str, Any]]:
    """`tool_call(tool, action, **data)` -> tools/call params."""
    return call


@pytest.fixture
def parse_challenge() -> Callable[[str], dict[str, str]]:
    """Parse a `WWW-Authenticate: Bearer ...` header into its parameters."""
    return challenge


def call(tool: str, action: str | None = None, **data: Any) -> dict[str, Any]:
    """The params of a tools/call."""
    if action is None:
        return {"name": tool, "arguments": data}
    return {"name": tool, "arguments": {"action": action, "data": data}}


def challenge(header: str) -> dict[str, str]:
    """Parse `Bearer k="v", k2="v2"` into a dict (values hold no quotes)."""
    scheme, _, rest = header.partition(" ")
    assert scheme == "Bearer"
    pairs = re.findall(r'([a-z_]+)="([^"]*)"(?:, |$)', rest)
    assert ", ".join(f'{k}="{v}"' for k, v in pairs) == rest
    return dict(pairs)
