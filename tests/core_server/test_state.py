"""Sealed requestState."""

from __future__ import annotations

import pytest

from wymcp.core.server._state import Round, StateError, seal, unseal

SECRET = b"k" * 32


def sealed(**overrides):
    options = {"target": "tools/call:t", "principal": "alice", "expires": 200.0}
    options.update(overrides)
    return seal(SECRET, {"step": 1}, **options)


def test_round_trip():
    token = sealed()
    opened = unseal(SECRET, token, target="tools/call:t", principal="alice", now=100)
    assert opened == Round(state={"step": 1})


def test_answers_partial_answers_and_the_round_count_travel_sealed():
    answers = ({"a": {"action": "accept"}}, {"b": {"roots": []}})
    token = seal(
        SECRET,
        None,
        target="tools/call:t",
        principal=None,
        expires=200.0,
        answers=answers,
        partial={"c": {"x": 1}},
        rounds=3,
    )
    opened = unseal(SECRET, token, target="tools/call:t", principal=None, now=100)
    assert opened == Round(None, answers, {"c": {"x": 1}}, 3)


@pytest.mark.parametrize(
    ("token", "options"),
    [
        ("garbage", {}),
        ("a.b.c", {}),
        ("!!.??", {}),
        (None, {}),
        ("x" * 70_000, {}),
        (sealed() + "-TAMPERED", {}),
        (sealed(), {"target": "tools/call:other"}),
        (sealed(), {"principal": "mallory"}),
        (sealed(), {"principal": None}),
        (sealed(), {"now": 300}),
    ],
)
def test_untrusted_state_is_refused(token, options):
    arguments = {"target": "tools/call:t", "principal": "alice", "now": 100}
    arguments.update(options)
    with pytest.raises(StateError):
        unseal(SECRET, token, **arguments)


def test_another_secret_cannot_open_it():
    with pytest.raises(StateError):
        unseal(b"z" * 32, sealed(), target="tools/call:t", principal="alice", now=1)
