"""Principal, InvalidToken, TokenValidator and reading a tool's scopes."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from wymcp.core.schema import Action, Tool, prepare
from wymcp.core.server import InvalidToken, Principal, TokenValidator
from wymcp.core.server._authorization import tool_scopes
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
    return tool_scopes(prepare(tool))


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


def test_tool_scopes_reads_what_registration_checked():
    table = declared({"*": ["notes:read"], "erase": ["notes:admin"]})
    assert dict(table) == {"*": {"notes:read"}, "erase": {"notes:admin"}}
    assert dict(declared(None)) == {}
