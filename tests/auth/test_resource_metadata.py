"""RFC 9728 protected-resource metadata at both well-known forms."""

from __future__ import annotations

from typing import Any

import pytest

from wymcp.transport.aiohttp import create_app

ISSUER = "https://auth.example.com"
WELL_KNOWN = "/.well-known/oauth-protected-resource"


@pytest.mark.parametrize("path", [WELL_KNOWN, WELL_KNOWN + "/mcp"])
async def test_both_forms_serve_the_document_without_a_token(auth_client, path):
    client = await auth_client()
    response = await client.get(path)
    assert response.status == 200
    assert response.content_type == "application/json"
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert await response.json() == {
        "resource": "http://127.0.0.1/mcp",
        "authorization_servers": [ISSUER],
        "scopes_supported": ["tasks:admin", "tasks:read"],
        "bearer_methods_supported": ["header"],
        "resource_name": "wymcp",
    }


async def test_scopes_supported_can_be_set_and_required_scopes_are_listed(
    auth_client,
):
    client = await auth_client(AUTH_REQUIRED_SCOPES=["mcp"])
    document = await (await client.get(WELL_KNOWN)).json()
    assert document["scopes_supported"] == ["mcp", "tasks:admin", "tasks:read"]
    client = await auth_client(AUTH_SCOPES_SUPPORTED=["only", "these"])
    document = await (await client.get(WELL_KNOWN)).json()
    assert document["scopes_supported"] == ["only", "these"]


async def test_without_auth_resource_the_resource_follows_the_request(
    auth_client, parse_challenge
):
    client = await auth_client(AUTH_RESOURCE=None)
    host = f"127.0.0.1:{client.port}"
    document = await (await client.get(WELL_KNOWN + "/mcp")).json()
    assert document["resource"] == f"http://{host}/mcp"
    response = await client.post("/mcp", json={})
    assert parse_challenge(response.headers["WWW-Authenticate"]) == {
        "resource_metadata": f"http://{host}{WELL_KNOWN}/mcp"
    }


async def test_a_resource_behind_a_prefix_is_served_at_its_own_suffix(
    auth_client, parse_challenge
):
    client = await auth_client(AUTH_RESOURCE="https://mcp.example.com/team/mcp")
    for path in (WELL_KNOWN, WELL_KNOWN + "/mcp", WELL_KNOWN + "/team/mcp"):
        response = await client.get(path)
        assert response.status == 200, path
        assert (await response.json())["resource"] == (
            "https://mcp.example.com/team/mcp"
        )
    response = await client.post("/mcp", json={})
    assert parse_challenge(response.headers["WWW-Authenticate"]) == {
        "resource_metadata": f"https://mcp.example.com{WELL_KNOWN}/team/mcp"
    }


async def test_a_root_resource_has_only_the_root_form(auth_client, parse_challenge):
    client = await auth_client(AUTH_RESOURCE="https://mcp.example.com/", PATH="/")
    assert (await client.get(WELL_KNOWN)).status == 200
    response = await client.post("/", json={})
    assert parse_challenge(response.headers["WWW-Authenticate"]) == {
        "resource_metadata": f"https://mcp.example.com{WELL_KNOWN}"
    }


async def test_a_foreign_host_is_refused(auth_client):
    client = await auth_client()
    response = await client.get(WELL_KNOWN, headers={"Host": "evil.example.com"})
    assert response.status == 403


async def test_only_get_is_served(auth_client):
    client = await auth_client()
    assert (await client.post(WELL_KNOWN, json={})).status == 405


async def test_without_auth_there_is_no_metadata(aiohttp_client: Any):
    client = await aiohttp_client(create_app())
    assert (await client.get(WELL_KNOWN)).status == 404
    assert (await client.get(WELL_KNOWN + "/mcp")).status == 404
