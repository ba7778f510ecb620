"""Principal, InvalidToken, TokenValidator, and the engine's tool-scope check."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from wymcp.core.schema import Action, Tool, prepare
from wymcp.core.server import (
    BearerChallenge,
    Engine,
    EngineOptions,
    Exchange,
    Headers,
    InvalidToken,
    Principal,
    TokenValidator,
)
from wymcp.core.server._authorization import refuse_call
from wymcp.core.server._session import principal_key


class Notes(Tool):
    name = "notes"
    description = "Keep notes."
    actions: ClassVar[dict[str, Action]] = {
        "read": Action(description="Read notes", properties={}),
        "erase": Action(description="Erase notes", properties={}),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        return None


def declared(scopes: object) -> Any:
    tool = type("Scoped", (Notes,), {"scopes": scopes, "name": "scoped"})
    return prepare(tool).scopes


def test_a_principal_is_frozen_and_keyed_by_its_subject():
    first = Principal("ann", ["a", "b"], {"exp": 1})
    second = Principal("ann", {"a"}, {"exp": 2})
    assert first.scopes == frozenset({"a", "b"})
    assert first.sub == "ann"
    assert principal_key(first) == principal_key(second) == "sub:ann"
    assert first.missing(["a", "c"]) == {"c"}
    with pytest.raises(TypeError):
        first.claims["exp"] = 3  # type: ignore[index]
    assert hash(first) == hash(Principal("ann", ["b", "a"], {"other": 1}))


def test_invalid_token_descriptions_are_bounded_and_quote_free():
    assert InvalidToken().description == "The access token is invalid."
    text = InvalidToken('bad "x"\\ \r\n' + "y" * 500).description
    assert len(text) == 200
    assert '"' not in text
    assert "\\" not in text
    assert "\n" not in text


def test_a_validator_satisfies_the_protocol():
    class Mine:
        async def validate(self, token: str) -> Principal:
            return Principal(token)

    assert isinstance(Mine(), TokenValidator)


def test_a_prepared_tool_carries_the_scopes_registration_checked():
    table = declared({"*": ["notes:read"], "erase": ["notes:admin"]})
    assert dict(table) == {"*": {"notes:read"}, "erase": {"notes:admin"}}
    assert dict(declared(None)) == {}


METADATA = "https://mcp.example/.well-known/oauth-protected-resource/mcp"
CHALLENGE = BearerChallenge(METADATA, ["mcp"])


class Scoped(Notes):
    name = "scoped"
    scopes: ClassVar[dict[str, list[str]]] = {
        "*": ["notes:read"],
        "erase": ["notes:admin"],
    }


def call(name: object, action: object = "erase", rid: object = 7) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": name, "arguments": {"action": action, "data": {}}},
    }


def exchange(body: object, principal: object, challenge: object = CHALLENGE) -> Any:
    return Exchange("POST", Headers.of([]), body, principal, challenge=challenge)


def lookup(name: str) -> Any:
    return prepare(Scoped) if name == "scoped" else None


def test_a_call_lacking_an_action_scope_is_403_naming_every_scope_needed():
    alice = Principal("alice", ["mcp", "notes:read"])
    reply = refuse_call(exchange(call("scoped"), alice), lookup)
    assert reply is not None
    assert reply.status == 403
    assert reply.body == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {
            "code": -32600,
            "message": "Forbidden: this request needs the scopes mcp notes:admin "
            "notes:read. Ask the authorization server for a token with all of them.",
        },
    }
    assert reply.headers["WWW-Authenticate"] == (
        f'Bearer resource_metadata="{METADATA}", error="insufficient_scope", '
        'error_description="This request needs the scopes: mcp notes:admin '
        'notes:read.", scope="mcp notes:admin notes:read"'
    )


def test_an_unknown_action_needs_the_tool_wide_scopes_and_an_unusable_id_is_null():
    bob = Principal("bob", ["mcp"])
    reply = refuse_call(exchange(call("scoped", "nope", rid="x" * 500), bob), lookup)
    assert reply is not None
    assert reply.body["id"] is None
    assert reply.headers["WWW-Authenticate"].endswith('scope="mcp notes:read"')
    granted = Principal("bob", ["mcp", "notes:read"])
    assert refuse_call(exchange(call("scoped", "read"), granted), lookup) is None


@pytest.mark.parametrize(
    "body",
    [
        call("unknown"),
        call(["scoped"]),
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"method": "tools/call", "params": "scoped"},
        [call("scoped")],
        None,
    ],
)
def test_only_a_call_of_a_known_tool_is_checked(body):
    assert refuse_call(exchange(body, Principal("eve")), lookup) is None


def test_without_a_challenge_or_a_principal_nothing_is_checked():
    assert refuse_call(exchange(call("scoped"), Principal("eve"), None), lookup) is None
    assert refuse_call(exchange(call("scoped"), None), lookup) is None


async def test_the_engine_refuses_before_it_reads_anything_else():
    engine = Engine(tools=[Scoped], options=EngineOptions())
    body = call("scoped")
    del body["jsonrpc"]  # not even valid JSON-RPC: the scopes come first
    reply = await engine.post(exchange(body, Principal("eve", ["mcp"])), None)  # type: ignore[arg-type]
    assert reply.status == 403
    granted = Principal("eve", ["mcp", "notes:read", "notes:admin"])
    reply = await engine.post(exchange(body, granted), None)  # type: ignore[arg-type]
    assert reply.status == 400
