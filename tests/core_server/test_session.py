"""The in-memory session store and principal identities."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from wymcp.core.server import MemorySessionStore, Session
from wymcp.core.server._session import principal_key
from wymcp.core.server._session_declaration import JsonView, compact


def test_the_store_caps_live_sessions_but_sweeps_expired_ones_first():
    now = [0.0]
    store = MemorySessionStore(idle_timeout=10, max_sessions=1, clock=lambda: now[0])
    first = Session(id="a", protocol_version="2025-11-25")
    assert store.add(first)
    assert not store.add(Session(id="b", protocol_version="2025-11-25"))
    now[0] = 11
    assert store.add(Session(id="c", protocol_version="2025-11-25"))
    assert first.closed
    assert store.get("a") is None
    assert [s.id for s in store.sessions()] == ["c"]
    assert store.remove("c") is not None
    assert store.remove("c") is None


@attrs.frozen
class User:
    name: str
    token: str


def test_principal_key_prefers_stable_identities():
    assert principal_key(None) is None
    assert principal_key({"sub": "a", "exp": 1}) == principal_key(
        {"sub": "a", "exp": 2}
    )
    assert principal_key({"id": 7}) == "id:7"
    assert principal_key({"x": 1}) == "{'x': 1}"
    assert principal_key(User("ann", "t1")) == principal_key(User("ann", "t2"))
    assert principal_key("alice") == "alice"


def test_a_session_keeps_its_declaration_as_json_and_decodes_it_when_read():
    session = Session(
        id="a",
        protocol_version="2025-11-25",
        capabilities_json=compact({"roots": {"listChanged": True}, "x": ["é"]}),
        client_info_json=compact({"name": "c"}),
    )
    capabilities = session.client_capabilities
    assert isinstance(capabilities, Mapping)
    assert "roots" in capabilities
    assert capabilities["roots"] == {"listChanged": True}
    assert sorted(capabilities) == ["roots", "x"]
    assert len(capabilities) == 2
    assert capabilities == {"roots": {"listChanged": True}, "x": ["é"]}
    assert "JsonView" in repr(capabilities)
    assert session.client_info["name"] == "c"
    assert not Session(id="b", protocol_version="2025-11-25").client_capabilities


def test_a_declaration_view_that_is_not_an_object_reads_as_empty():
    assert dict(JsonView(b"[1, 2]")) == {}
