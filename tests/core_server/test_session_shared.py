"""A Session's shared record: every shared field travels, every other is local."""

from __future__ import annotations

import json

import attrs

from wymcp.core.server import Session, principal_key, watch_cost
from wymcp.core.server._session import LOCAL_ONLY, SHARED


def _distinct_session() -> Session:
    """A session whose every shared field differs from its default."""
    return Session(
        id="s" * 43,
        protocol_version="2025-06-18",
        capabilities_json=b'{"sampling":{}}',
        client_info_json='{"name":"caf\u00e9","version":"1"}'.encode(),
        principal={"sub": "alice", "exp": 1},
        log_level="debug",
        initialized=True,
        subscriptions={"file:///b", "file:///a"},
        dirty={"tools", "prompts"},
    )


def test_every_field_is_either_shared_or_local_only():
    # a new field must be listed: shared (it travels) or local-only (and why)
    fields = {field.name for field in attrs.fields(Session)}
    assert set(SHARED).isdisjoint(LOCAL_ONLY)
    assert fields == set(SHARED) | set(LOCAL_ONLY)


def test_every_shared_field_round_trips_through_json():
    session = _distinct_session()
    record = json.loads(json.dumps(session.shared()))
    assert set(record) == set(SHARED.values())
    copy = Session.from_shared(session.id, record)
    assert copy.id == session.id
    for name in SHARED:
        expected = getattr(session, name)
        if name == "principal":  # travels as the key the engine compares
            expected = principal_key(expected)
        assert getattr(copy, name) == expected, name
        assert getattr(copy, name) != getattr(Session("x", "y"), name), name


def test_the_copy_owns_no_local_state_and_counts_its_watch_set():
    copy = Session.from_shared("s" * 43, _distinct_session().shared())
    assert copy.watched_bytes == watch_cost("file:///a") + watch_cost("file:///b")
    assert copy.stream is None
    assert copy.in_flight == {}
    assert copy.pending == {}
    assert copy.started is None


def test_the_record_is_what_workers_already_share():
    # one key per field, sets sorted: a rolling upgrade reads the old records
    assert _distinct_session().shared() == {
        "v": "2025-06-18",
        "c": '{"sampling":{}}',
        "i": '{"name":"caf\u00e9","version":"1"}',
        "p": "sub:alice",
        "l": "debug",
        "n": True,
        "w": ["file:///a", "file:///b"],
        "d": ["prompts", "tools"],
    }


def test_an_older_record_without_watch_set_or_owed_changes_reads():
    record = {"v": "2025-03-26", "c": "{}", "i": "{}", "p": None, "l": None, "n": False}
    copy = Session.from_shared("s" * 43, record)
    assert copy.subscriptions == set()
    assert copy.dirty == set()
    assert copy.watched_bytes == 0
