"""Hostile Authorization headers over a real socket, with real HS256 JWTs.

Whatever a client puts in `Authorization`, the answer is a 400/401/403 with
a bounded challenge that never quotes the token, the body is never read
before the token is accepted, and the server keeps serving. (The validator
itself, scopes and metadata are covered in tests/auth/.)
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import jwt
import pytest

from wymcp.transport.aiohttp import JwtValidator

if TYPE_CHECKING:
    from conftest import Answer, Serve, Wire

SECRET = "a shared secret of at least thirty-two bytes!"
ISSUER = "https://issuer.example"
RESOURCE = "http://127.0.0.1/mcp"
SMALL = 1024


def token(**claims: Any) -> str:
    """A signed token for this resource; `claims` override the defaults."""
    now = int(time.time())
    payload = {
        "iss": ISSUER,
        "aud": RESOURCE,
        "sub": "alice",
        "exp": now + 600,
        "iat": now,
        "scope": "mcp",
    }
    payload.update(claims)
    payload = {key: value for key, value in payload.items() if value is not None}
    return jwt.encode(payload, SECRET, algorithm="HS256")


async def protected(serve: Serve) -> Wire:
    """A server that needs a token with the `mcp` scope."""
    return await serve(
        AUTH=JwtValidator(
            issuer=ISSUER, audience=RESOURCE, key=SECRET, algorithms=["HS256"]
        ),
        AUTH_AUTHORIZATION_SERVERS=[ISSUER],
        AUTH_RESOURCE=RESOURCE,
        AUTH_REQUIRED_SCOPES=["mcp"],
    )


def call_bytes(wire: Wire, authorization: bytes | None) -> bytes:
    """A valid echo call with `authorization` as the raw header value."""
    body = json.dumps(
        wire.body(
            "tools/call",
            {"name": "echo", "arguments": {"action": "say", "data": {"text": "a"}}},
        )
    ).encode()
    request = wire.request_bytes(body, wire.headers("tools/call", "echo"))
    if authorization is None:
        return request
    head, _, rest = request.partition(b"\r\n")
    return head + b"\r\nAuthorization: " + authorization + b"\r\n" + rest


def assert_challenged(answer: Answer, status: int, secret: bytes = b"") -> None:
    """A bounded refusal with a Bearer challenge that quotes no token."""
    assert answer.status == status, answer
    assert len(answer.body) <= SMALL
    assert b"Traceback" not in answer.body
    if answer.headers["content-type"].startswith("application/json"):
        challenge = answer.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert "resource_metadata=" in challenge
        assert len(challenge) <= SMALL
        if secret:
            assert secret[:40].decode("latin-1") not in challenge
            assert secret[:40] not in answer.body


async def test_a_valid_token_is_served(serve: Serve) -> None:
    wire = await protected(serve)
    answer = await wire.send(call_bytes(wire, f"Bearer {token()}".encode()))
    assert answer.status == 200
    assert answer.json()["result"]["isError"] is False


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        b"",
        b"Bearer",
        b"Bearer ",
        b"Basic YWxpY2U6c2VjcmV0",
        b"Token abc",
        b"Bearer not.a.jwt",
        b"Bearer " + b"A" * 7000,
        b"Bearer \xc3\xa9\xc3\xa9.\xc3\xa9.\xc3\xa9",
        b"Bearer a b c",
        b"Bearer =?base64?YWJj?=",
    ],
    ids=[
        "absent",
        "empty",
        "scheme-only",
        "scheme-space",
        "basic",
        "other-scheme",
        "garbage",
        "huge",
        "non-ascii",
        "spaces",
        "sentinel",
    ],
)
async def test_missing_or_malformed_tokens_get_401(
    serve: Serve, authorization: bytes | None
) -> None:
    wire = await protected(serve)
    answer = await wire.send(call_bytes(wire, authorization))
    assert_challenged(answer, 401, (authorization or b"")[7:])
    await_healthy = await wire.send(call_bytes(wire, f"Bearer {token()}".encode()))
    assert await_healthy.status == 200


@pytest.mark.parametrize(
    "claims",
    [
        {"exp": 1},
        {"aud": "https://other.example/mcp"},
        {"iss": "https://evil.example"},
        {"exp": None},
        {"nbf": 4_000_000_000},
        {"sub": None},
    ],
    ids=["expired", "other-audience", "other-issuer", "no-exp", "not-yet", "no-sub"],
)
async def test_refused_tokens_get_401_invalid_token(
    serve: Serve, claims: dict[str, Any]
) -> None:
    wire = await protected(serve)
    bad = token(**claims)
    answer = await wire.send(call_bytes(wire, f"Bearer {bad}".encode()))
    assert_challenged(answer, 401, bad.encode())
    assert 'error="invalid_token"' in answer.headers["www-authenticate"]


async def test_forged_and_unsigned_tokens_get_401(serve: Serve) -> None:
    wire = await protected(serve)
    forged = jwt.encode(
        jwt.decode(token(), options={"verify_signature": False}),
        "another secret that is long enough to sign",
        algorithm="HS256",
    )
    header, payload, _ = token().split(".")
    unsigned_header = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0"  # {"alg":"none"}
    for bad in (forged, f"{unsigned_header}.{payload}.", f"{header}.{payload}."):
        answer = await wire.send(call_bytes(wire, f"Bearer {bad}".encode()))
        assert_challenged(answer, 401, bad.encode())


async def test_a_token_with_huge_claims_is_bounded(serve: Serve) -> None:
    wire = await protected(serve)
    big = token(scope="mcp " + "x" * 2000, extra="y" * 2000)  # a 5.5 KB header
    answer = await wire.alongside(
        wire.send(call_bytes(wire, f"Bearer {big}".encode())),
        ping_headers={"Authorization": f"Bearer {token()}"},
    )
    assert answer.status == 200
    assert len(answer.body) <= SMALL


async def test_a_token_over_the_header_line_limit_gets_the_parser_400(
    serve: Serve,
) -> None:
    wire = await protected(serve)
    huge = token(extra="y" * 7000)
    answer = await wire.send(call_bytes(wire, f"Bearer {huge}".encode()))
    assert answer.status == 400
    assert answer.headers["content-type"].startswith("application/json")
    assert len(answer.body) <= 300
    assert huge.split(".")[2].encode() not in answer.body  # never the signature


async def test_a_token_without_the_required_scope_gets_403(serve: Serve) -> None:
    wire = await protected(serve)
    answer = await wire.send(
        call_bytes(wire, f"Bearer {token(scope='other')}".encode())
    )
    assert_challenged(answer, 403)
    challenge = answer.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge
    assert 'scope="mcp"' in challenge


async def test_two_authorization_headers_get_400(serve: Serve) -> None:
    wire = await protected(serve)
    good = f"Bearer {token()}".encode()
    request = call_bytes(wire, good)
    request = request.replace(
        b"Authorization: ", b"Authorization: " + good + b"\r\nAuthorization: ", 1
    )
    assert_challenged(await wire.send(request), 400)


@pytest.mark.parametrize(
    "authorization",
    [b"Bearer abc\rdef", b"Bearer abc\x00def", b"Bearer abc\ndef: x"],
    ids=["cr", "nul", "lf"],
)
async def test_control_characters_in_authorization_never_reach_the_validator(
    serve: Serve, authorization: bytes
) -> None:
    wire = await protected(serve)
    answer = await wire.send(call_bytes(wire, authorization))
    assert answer.status in {400, 401}
    assert len(answer.body) <= SMALL


async def test_an_unauthenticated_body_is_never_read(serve: Serve) -> None:
    wire = await protected(serve)
    request = call_bytes(wire, None)
    head, _, _ = request.partition(b"\r\n\r\n")
    head = head.replace(b"Content-Length: ", b"X-Was-Length: ")
    oversized = head + f"\r\nContent-Length: {10**12}\r\n\r\n".encode()
    assert_challenged(await wire.send(oversized), 401)


async def test_another_subject_cannot_use_a_session(serve: Serve) -> None:
    wire = await protected(serve)
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "a", "version": "0"},
        },
    }
    alice = {"Content-Type": "application/json", "Authorization": f"Bearer {token()}"}
    answer = await wire.post(init, alice)
    assert answer.status == 200
    session = answer.headers["mcp-session-id"]
    mallory = {
        "Content-Type": "application/json",
        "Authorization": f"Bearer {token(sub='mallory')}",
        "MCP-Protocol-Version": "2025-11-25",
        "Mcp-Session-Id": session,
    }
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    stolen = await wire.post(listing, mallory)
    assert stolen.status == 404
    assert len(stolen.body) <= SMALL
