"""JwtValidator: real signed tokens, every way a token can be wrong."""

from __future__ import annotations

import time
from typing import Any

import jwt
import pytest
from aiohttp import web
from cryptography.hazmat.primitives import serialization

from wymcp.transport.aiohttp import InvalidToken, JwtValidator, Principal

ISSUER = "https://auth.example.com"
RESOURCE = "http://127.0.0.1/mcp"


async def test_a_valid_token_names_its_subject_scopes_and_claims(issuer):
    token = issuer.token("alice", "tasks:read tasks:admin", tenant="acme")
    principal = await issuer.validator().validate(token)
    assert isinstance(principal, Principal)
    assert principal.subject == "alice"
    assert principal.sub == "alice"
    assert principal.scopes == {"tasks:read", "tasks:admin"}
    assert principal.claims["tenant"] == "acme"
    assert principal.claims["aud"] == RESOURCE


async def test_scopes_may_come_as_an_scp_list(issuer):
    token = issuer.token("bob", None, scp=["a", "b", 3])
    assert (await issuer.validator().validate(token)).scopes == {"a", "b"}


async def test_an_audience_list_holding_this_resource_is_accepted(issuer):
    token = issuer.token(aud=["https://other.example.com", RESOURCE])
    assert (await issuer.validator().validate(token)).subject == "alice"


async def test_an_ec_issuer_works(make_issuer):
    ec_issuer = make_issuer(kind="ec")
    validator = ec_issuer.validator(algorithms=["ES256"])
    assert (await validator.validate(ec_issuer.token("eve"))).subject == "eve"


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"lifetime": -120}, "The access token has expired."),
        ({"aud": "https://other.example.com/mcp"}, "not issued for this resource"),
        ({"iss": "https://evil.example.com"}, "not issued by the expected issuer"),
        ({"exp": None}, "lacks the exp claim"),
        ({"sub": None}, "lacks the sub claim"),
        ({"aud": None}, "lacks the aud claim"),
        ({"nbf": int(time.time()) + 3600}, "not valid yet"),
        ({"sub": ""}, "names no subject"),
    ],
)
async def test_each_wrong_claim_is_refused_with_its_reason(issuer, claims, reason):
    lifetime = claims.pop("lifetime", 300)
    token = issuer.token(lifetime=lifetime, **claims)
    with pytest.raises(InvalidToken, match=reason) as exc:
        await issuer.validator().validate(token)
    assert token not in exc.value.description


async def test_a_token_from_another_key_is_refused(issuer, make_issuer):
    forged = make_issuer().token("alice", "tasks:read")
    with pytest.raises(InvalidToken, match="signature does not verify"):
        await issuer.validator().validate(forged)


async def test_an_unsigned_token_is_refused(issuer):
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": RESOURCE, "sub": "mallory", "exp": now + 60}
    unsigned = jwt.encode(claims, None, algorithm="none")
    with pytest.raises(InvalidToken, match="algorithm not accepted"):
        await issuer.validator().validate(unsigned)


async def test_the_public_key_used_as_an_hmac_secret_is_refused(issuer):
    pem = issuer.public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": RESOURCE, "sub": "mallory", "exp": now + 60}
    confused = _hs256(claims, pem)  # pyjwt itself refuses to sign this
    with pytest.raises(InvalidToken, match="algorithm not accepted"):
        await issuer.validator().validate(confused)
    pem_validator = JwtValidator(
        issuer=ISSUER, audience=RESOURCE, key=pem, algorithms=["RS256", "HS256"]
    )
    with pytest.raises(InvalidToken):
        await pem_validator.validate(confused)
    with pytest.raises(ValueError, match="HS algorithms need key= as a shared"):
        issuer.validator(algorithms=["RS256", "HS256"])


def _hs256(claims: dict[str, Any], secret: bytes) -> str:
    import base64
    import hashlib
    import hmac
    import json

    def part(value: Any) -> bytes:
        raw = json.dumps(value, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=")

    signing = part({"alg": "HS256", "typ": "JWT"}) + b"." + part(claims)
    signature = hmac.new(secret, signing, hashlib.sha256).digest()
    return (signing + b"." + base64.urlsafe_b64encode(signature).rstrip(b"=")).decode()


@pytest.mark.parametrize("token", ["garbage", "a.b.c", "e30.e30.", "x" * 5000])
async def test_garbage_is_not_a_well_formed_jwt(issuer, token):
    with pytest.raises(InvalidToken) as exc:
        await issuer.validator().validate(token)
    assert len(exc.value.description) <= 200
    assert "x" * 50 not in exc.value.description


async def test_a_shared_secret_works_with_hs256():
    secret = "k" * 32
    validator = JwtValidator(
        issuer=ISSUER, audience=RESOURCE, key=secret, algorithms=["HS256"]
    )
    now = int(time.time())
    token = jwt.encode(
        {"iss": ISSUER, "aud": RESOURCE, "sub": "svc", "exp": now + 60, "scope": "x"},
        secret,
        algorithm="HS256",
    )
    assert (await validator.validate(token)).scopes == {"x"}


async def test_keys_can_come_from_the_issuers_jwks(aiohttp_server, issuer, make_issuer):
    app = web.Application()
    fetched: list[int] = []

    async def jwks(request: web.Request) -> web.Response:
        fetched.append(1)
        return web.json_response(issuer.jwks())

    app.router.add_get("/jwks.json", jwks)
    server = await aiohttp_server(app)
    validator = JwtValidator(
        issuer=ISSUER, audience=RESOURCE, jwks_url=str(server.make_url("/jwks.json"))
    )
    assert (await validator.validate(issuer.token("carol"))).subject == "carol"
    assert (await validator.validate(issuer.token("dave"))).subject == "dave"
    assert len(fetched) == 1  # the key is remembered
    for kid in ("other", "another"):
        made_up = make_issuer(kid=kid).token("mallory")
        with pytest.raises(InvalidToken, match="not signed by a key of the issuer"):
            await validator.validate(made_up)
    assert len(fetched) <= 2  # unknown kids refetch at most once per cooldown
    with pytest.raises(InvalidToken, match="not a well-formed JWT"):
        await validator.validate("garbage")


async def test_an_unreachable_jwks_is_a_connection_error_not_a_bad_token(
    unused_tcp_port, issuer
):
    validator = JwtValidator(
        issuer=ISSUER,
        audience=RESOURCE,
        jwks_url=f"http://127.0.0.1:{unused_tcp_port}/jwks.json",
    )
    with pytest.raises(ConnectionError):
        await validator.validate(issuer.token())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"key": "k", "jwks_url": "https://a/jwks"},
            "exactly one of key= or jwks_url=",
        ),
        ({}, "exactly one of key= or jwks_url="),
        ({"key": "k", "issuer": ""}, "needs the issuer="),
        ({"key": "k", "audience": []}, "needs the audience="),
        ({"key": "k", "algorithms": ["none"]}, "never 'none'"),
    ],
)
def test_a_validator_built_wrong_says_what_it_needs(options, message):
    arguments: dict[str, Any] = {"issuer": ISSUER, "audience": RESOURCE, **options}
    with pytest.raises(ValueError, match=message):
        JwtValidator(**arguments)
