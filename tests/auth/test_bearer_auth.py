"""The endpoint as an OAuth resource server: 401, 403, principals, sessions."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest
from aiohttp import web

from wymcp.conf import Settings
from wymcp.core.schema import ConfigurationError, Tool
from wymcp.core.server import Engine, EngineOptions
from wymcp.transport.aiohttp import InvalidToken, Principal
from wymcp.transport.aiohttp._setup import get_endpoint, mount

METADATA = "http://127.0.0.1/.well-known/oauth-protected-resource/mcp"
LEGACY = "2025-11-25"
JSON = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def initialize(client: Any, token: str) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    response = await client.post("/mcp", json=body, headers={**JSON, **bearer(token)})
    assert response.status == 200, await response.text()
    sid = response.headers["Mcp-Session-Id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    headers = {
        **JSON,
        **bearer(token),
        "Mcp-Session-Id": sid,
        "MCP-Protocol-Version": LEGACY,
    }
    response = await client.post("/mcp", json=note, headers=headers)
    assert response.status == 202
    return sid


async def session_call(
    client: Any, token: str, sid: str, params: dict[str, Any]
) -> Any:
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    headers = {
        **JSON,
        **bearer(token),
        "Mcp-Session-Id": sid,
        "MCP-Protocol-Version": LEGACY,
    }
    return await client.post("/mcp", json=body, headers=headers)


def result_of(payload: dict[str, Any]) -> Any:
    result = payload["result"]
    assert result.get("isError") is not True, result
    return json.loads(result["content"][0]["text"])


async def test_a_request_without_a_token_is_told_where_to_get_one(
    auth_client, modern_request, parse_challenge
):
    client = await auth_client()
    body, headers = modern_request("server/discover")
    response = await client.post("/mcp", data=body, headers=headers)
    assert response.status == 401
    assert parse_challenge(response.headers["WWW-Authenticate"]) == {
        "resource_metadata": METADATA
    }
    payload = await response.json()
    assert payload["id"] is None
    assert payload["error"]["code"] == -32600
    assert "Authorization: Bearer" in payload["error"]["message"]


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_get_and_delete_need_a_token_too(auth_client, parse_challenge, method):
    client = await auth_client()
    response = await client.request(method, "/mcp", headers={"Mcp-Session-Id": "x"})
    assert response.status == 401
    assert "resource_metadata" in parse_challenge(response.headers["WWW-Authenticate"])


@pytest.mark.parametrize(
    ("authorization", "error"),
    [
        ("Basic YWxhZGRpbjpvcGVuc2VzYW1l", None),
        ("Bearer", None),
        ("Bearer not a token", "invalid_token"),
        ("Bearer " + "x" * 40, "invalid_token"),
    ],
)
async def test_a_missing_or_malformed_token_is_401(
    auth_client, modern_request, parse_challenge, authorization, error
):
    client = await auth_client()
    body, headers = modern_request("server/discover")
    headers["Authorization"] = authorization
    response = await client.post("/mcp", data=body, headers=headers)
    assert response.status == 401
    params = parse_challenge(response.headers["WWW-Authenticate"])
    assert params.get("error") == error
    assert "x" * 40 not in await response.text()


async def test_an_expired_token_is_401_invalid_token(
    auth_client, issuer, modern_request, parse_challenge
):
    client = await auth_client()
    token = issuer.token(scope="tasks:read", lifetime=-120)
    body, headers = modern_request("server/discover", token=token)
    response = await client.post("/mcp", data=body, headers=headers)
    assert response.status == 401
    assert parse_challenge(response.headers["WWW-Authenticate"]) == {
        "resource_metadata": METADATA,
        "error": "invalid_token",
        "error_description": "The access token has expired.",
    }
    assert token not in await response.text()


async def test_a_token_for_another_resource_is_401(
    auth_client, issuer, modern_request, parse_challenge
):
    client = await auth_client()
    token = issuer.token(aud="https://other.example.com/mcp")
    body, headers = modern_request("server/discover", token=token)
    response = await client.post("/mcp", data=body, headers=headers)
    assert response.status == 401
    params = parse_challenge(response.headers["WWW-Authenticate"])
    assert params["error_description"] == (
        "The access token was not issued for this resource."
    )


async def test_two_authorization_headers_are_400(auth_client, issuer, modern_request):
    client = await auth_client()
    body, headers = modern_request("server/discover")
    token = issuer.token()
    response = await client.post(
        "/mcp",
        data=body,
        headers=[*headers.items(), *[("Authorization", f"Bearer {token}")] * 2],
    )
    assert response.status == 400
    assert 'error="invalid_request"' in response.headers["WWW-Authenticate"]


async def test_a_valid_token_reaches_the_tool_as_ctx_principal(
    auth_client, issuer, modern_request, tool_call
):
    client = await auth_client()
    token = issuer.token("alice", "tasks:read", tenant="acme")
    body, headers = modern_request(
        "tools/call", tool_call("tasks", "list"), token=token
    )
    response = await client.post("/mcp", data=body, headers=headers)
    assert response.status == 200
    assert result_of(await response.json()) == {
        "action": "list",
        "subject": "alice",
        "scopes": ["tasks:read"],
    }
    body, headers = modern_request("tools/call", tool_call("whoami"), token=token)
    response = await client.post("/mcp", data=body, headers=headers)
    claims = result_of(await response.json())["claims"]
    assert claims["tenant"] == "acme"


async def test_a_missing_tool_scope_is_403_naming_every_scope_needed(
    auth_client, issuer, modern_request, tool_call, parse_challenge
):
    client = await auth_client()
    token = issuer.token("alice", "tasks:read")
    body, headers = modern_request(
        "tools/call", tool_call("tasks", "delete", id=1), token=token
    )
    response = await client.post("/mcp", data=body, headers=headers)
    assert response.status == 403
    assert parse_challenge(response.headers["WWW-Authenticate"]) == {
        "resource_metadata": METADATA,
        "error": "insufficient_scope",
        "error_description": "This request needs the scopes: tasks:admin tasks:read.",
        "scope": "tasks:admin tasks:read",
    }
    payload = await response.json()
    assert payload["id"] == 1
    assert "tasks:admin tasks:read" in payload["error"]["message"]


async def test_every_action_needs_the_tool_wide_scope(
    auth_client, issuer, modern_request, tool_call, parse_challenge
):
    client = await auth_client()
    token = issuer.token("bob", "tasks:admin")
    for action in ("list", "delete"):
        body, headers = modern_request(
            "tools/call", tool_call("tasks", action, id=1), token=token
        )
        response = await client.post("/mcp", data=body, headers=headers)
        assert response.status == 403
        params = parse_challenge(response.headers["WWW-Authenticate"])
        assert "tasks:read" in params["scope"].split()
    token = issuer.token("bob", "tasks:admin tasks:read")
    body, headers = modern_request(
        "tools/call", tool_call("tasks", "delete", id=1), token=token
    )
    response = await client.post("/mcp", data=body, headers=headers)
    assert result_of(await response.json())["action"] == "delete"


async def test_an_unknown_action_or_tool_meets_the_engine_not_a_403(
    auth_client, issuer, modern_request, tool_call
):
    client = await auth_client()
    token = issuer.token("bob", "")
    body, headers = modern_request("tools/call", tool_call("whoami"), token=token)
    response = await client.post("/mcp", data=body, headers=headers)
    assert result_of(await response.json())["subject"] == "bob"
    body, headers = modern_request("tools/call", tool_call("nope"), token=token)
    response = await client.post("/mcp", data=body, headers=headers)
    assert response.status != 403
    body, headers = modern_request(
        "tools/call", tool_call("tasks", "nope"), token=token
    )
    response = await client.post("/mcp", data=body, headers=headers)
    assert response.status == 403  # the tool-wide scope still applies


async def test_required_scopes_apply_to_every_request(
    auth_client, issuer, modern_request, parse_challenge
):
    client = await auth_client(AUTH_REQUIRED_SCOPES=["mcp"])
    body, headers = modern_request("server/discover")
    response = await client.post("/mcp", data=body, headers=headers)
    assert response.status == 401
    assert parse_challenge(response.headers["WWW-Authenticate"])["scope"] == "mcp"
    body, headers = modern_request("server/discover", token=issuer.token(scope="x"))
    response = await client.post("/mcp", data=body, headers=headers)
    assert response.status == 403
    assert parse_challenge(response.headers["WWW-Authenticate"])["scope"] == "mcp"
    response = await client.get("/mcp", headers=bearer(issuer.token(scope="x")))
    assert response.status == 403
    body, headers = modern_request("server/discover", token=issuer.token(scope="mcp"))
    response = await client.post("/mcp", data=body, headers=headers)
    assert response.status == 200


async def test_a_session_is_bound_to_the_principal_that_made_it(
    auth_client, issuer, tool_call
):
    client = await auth_client()
    alice = issuer.token("alice", "tasks:read")
    sid = await initialize(client, alice)
    response = await session_call(client, alice, sid, tool_call("tasks", "list"))
    assert result_of(await response.json())["subject"] == "alice"
    mallory = issuer.token("mallory", "tasks:read tasks:admin")
    response = await session_call(client, mallory, sid, tool_call("tasks", "list"))
    assert response.status == 404
    assert (await response.json())["error"]["message"] == "Session terminated"
    for method in ("GET", "DELETE"):
        response = await client.request(
            method,
            "/mcp",
            headers={
                **bearer(mallory),
                "Mcp-Session-Id": sid,
                "MCP-Protocol-Version": LEGACY,
            },
        )
        assert response.status == 404
    refreshed = issuer.token("alice", "tasks:read", lifetime=600, jti="second")
    response = await session_call(client, refreshed, sid, tool_call("tasks", "list"))
    assert result_of(await response.json())["subject"] == "alice"


async def test_the_token_is_checked_on_every_request_of_a_session(
    auth_client, issuer, tool_call
):
    client = await auth_client()
    sid = await initialize(client, issuer.token("alice", "tasks:read"))
    expired = issuer.token("alice", "tasks:read", lifetime=-120)
    response = await session_call(client, expired, sid, tool_call("tasks", "list"))
    assert response.status == 401
    narrower = issuer.token("alice", "")
    response = await session_call(client, narrower, sid, tool_call("tasks", "list"))
    assert response.status == 403


class Failing:
    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome

    async def validate(self, token: str) -> Any:
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


@pytest.mark.parametrize(
    "outcome", [RuntimeError("the database is down"), {"sub": "x"}, None]
)
async def test_a_failing_validator_is_503_and_logged_never_500(
    auth_client, modern_request, caplog, outcome
):
    client = await auth_client(AUTH=Failing(outcome))
    body, headers = modern_request("server/discover", token="abc")
    with caplog.at_level(logging.ERROR, logger="wymcp.transport.aiohttp"):
        response = await client.post("/mcp", data=body, headers=headers)
    assert response.status == 503
    assert response.headers["Retry-After"] == "5"
    text = await response.text()
    assert "database" not in text
    assert "Retry later" in text
    assert caplog.records


async def test_a_plain_function_validator_and_its_invalid_token(
    auth_client, modern_request, parse_challenge
):
    def validate(token: str) -> Principal:
        if token != "letmein":
            raise InvalidToken('Unknown "token"\nhere.')
        return Principal("fn-user", {"tasks:read"})

    client = await auth_client(AUTH=validate)
    body, headers = modern_request("server/discover", token="nope")
    response = await client.post("/mcp", data=body, headers=headers)
    assert response.status == 401
    params = parse_challenge(response.headers["WWW-Authenticate"])
    assert params["error_description"] == "Unknown tokenhere."
    body, headers = modern_request("server/discover", token="letmein")
    response = await client.post("/mcp", data=body, headers=headers)
    assert response.status == 200


async def test_the_token_is_checked_before_the_body_is_read(
    auth_client, modern_request
):
    client = await auth_client(BODY_LIMIT=10)
    body, headers = modern_request("server/discover")
    response = await client.post("/mcp", data=body, headers=headers)
    assert response.status == 401  # not 413: nobody unauthenticated is read


async def test_expect_100_continue_is_refused_401_before_the_body(
    auth_client, modern_request
):
    client = await auth_client()
    body, headers = modern_request("server/discover")
    response = await client.post(
        "/mcp", data=body, headers={**headers, "Expect": "100-continue"}
    )
    assert response.status == 401


async def test_expect_100_continue_with_a_token_validates_once(
    auth_client, issuer, modern_request
):
    class Counting:
        calls = 0

        async def validate(self, token: str) -> Principal:
            Counting.calls += 1
            return Principal("c")

    client = await auth_client(AUTH=Counting())
    body, headers = modern_request("server/discover", token="t")
    response = await client.post(
        "/mcp", data=body, headers={**headers, "Expect": "100-continue"}
    )
    assert response.status == 200
    assert Counting.calls == 1


async def test_without_auth_scopes_are_not_checked(
    aiohttp_client, modern_request, tool_call
):
    from wymcp.core.schema import Action, Tool
    from wymcp.transport.aiohttp import create_app

    class Scoped(Tool):
        name = "scoped"
        description = "Needs a scope."
        scopes = ["admin"]  # noqa: RUF012 - the pinned declaration style
        actions = {"go": Action(description="Go", properties={})}  # noqa: RUF012 - the pinned declaration style

        async def run_action(self, action: str, data: Any, ctx: Any) -> object:
            return {"principal": ctx.principal}

    client = await aiohttp_client(create_app(TOOLS=[Scoped]))
    body, headers = modern_request("tools/call", tool_call("scoped", "go"))
    response = await client.post("/mcp", data=body, headers=headers)
    assert result_of(await response.json()) == {"principal": None}


class BadScopes(Tool):
    name = "bad"
    description = "Declares a scope with a space."
    input_schema = {"type": "object", "properties": {}}  # noqa: RUF012 - the pinned declaration style
    scopes = ["two words"]  # noqa: RUF012 - the pinned declaration style

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return None


def test_a_wrong_scopes_declaration_fails_at_registration(issuer):
    with pytest.raises(ConfigurationError, match="'two words' is not a scope"):
        Engine(tools=[BadScopes], options=EngineOptions())
    settings = Settings().evolve(
        AUTH=issuer.validator(), AUTH_AUTHORIZATION_SERVERS=["https://a.example.com"]
    )
    app = web.Application()
    mount(app, settings, Engine(tools=[], options=EngineOptions()))
    with pytest.raises(ConfigurationError, match="'two words' is not a scope"):
        get_endpoint(app).engine.add_tool(BadScopes)  # type: ignore[attr-defined]


class Expiring:
    """Accepts any token as alice, expiring at a time the test sets."""

    def __init__(self) -> None:
        self.expires_at = time.time() + 3600

    async def validate(self, token: str) -> Principal:
        return Principal("alice", {"tasks:read"}, expires_at=self.expires_at)


async def test_a_stream_ends_when_the_token_that_opened_it_expires(auth_client):
    validator = Expiring()
    client = await auth_client(AUTH=validator)
    sid = await initialize(client, "t")
    validator.expires_at = time.time() + 0.2
    response = await client.get(
        "/mcp",
        headers={**bearer("t"), "Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY},
    )
    assert response.status == 200
    assert response.content_type == "text/event-stream"
    await asyncio.wait_for(response.read(), 10)  # the server ended the stream
    validator.expires_at = time.time() + 3600
    again = await client.get(
        "/mcp",
        headers={**bearer("t"), "Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY},
    )
    assert again.status == 200  # the session lives on; a fresh token reconnects
    again.close()


async def test_a_jwt_principal_expires_with_its_token_and_leeway(issuer):
    token = issuer.token("alice", lifetime=100)
    principal = await issuer.validator(leeway=5).validate(token)
    assert principal.expires_at == principal.claims["exp"] + 5
