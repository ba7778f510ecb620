"""Sealed requestState: encrypted, authenticated, bound, rotatable."""

from __future__ import annotations

import base64
import json

import pytest

from wymcp.core.server._stateless_request_state import (
    Round,
    StateError,
    StateKeys,
    seal,
    unseal,
)

SECRET = b"k" * 32
KEYS = StateKeys([SECRET])
CARD = "4242424242424242"


def sealed(keys: StateKeys = KEYS, **overrides):
    options = {"target": "tools/call:t#d1", "principal": "alice", "expires": 200.0}
    options.update(overrides)
    return seal(keys, {"step": 1}, **options)


def opened(token, keys: StateKeys = KEYS, **overrides):
    options = {"target": "tools/call:t#d1", "principal": "alice", "now": 100}
    options.update(overrides)
    return unseal(keys, token, **options)


def test_round_trip():
    assert opened(sealed()) == Round(state={"step": 1})


def test_answers_partial_answers_and_the_round_count_travel_sealed():
    answers = ({"a": {"action": "accept"}}, {"b": {"roots": []}})
    token = seal(
        KEYS,
        None,
        target="tools/call:t",
        principal=None,
        expires=200.0,
        answers=answers,
        partial={"c": {"x": 1}},
        rounds=3,
    )
    got = unseal(KEYS, token, target="tools/call:t", principal=None, now=100)
    assert got == Round(None, answers, {"c": {"x": 1}}, 3)


def _decodings(token: str) -> list[bytes]:
    """The token and every base64 reading of it someone might try."""
    raw = token.encode()
    found = [raw]
    for part in [token, *token.split(".")]:
        padded = part + "=" * (-len(part) % 4)
        for decode in (base64.urlsafe_b64decode, base64.b64decode):
            try:
                found.append(decode(padded))
            except ValueError:
                continue
    return found


def test_sealed_state_cannot_be_read():
    secret_bits = {"card": CARD, "holder": "Alice Liddell", "note": "last4=4242"}
    token = seal(
        KEYS,
        secret_bits,
        target="tools/call:pay#d1",
        principal="alice",
        expires=200.0,
        answers=({"confirm": {"action": "accept", "content": {"pin": "987654"}}},),
        partial={"cvv": {"content": {"cvv": "321"}}},
        rounds=2,
    )
    readable = ["4242", "Alice", "Liddell", "987654", "321", "card", "accept", "pay"]
    for blob in _decodings(token):
        for text in readable:
            assert text.encode() not in blob, text
    assert opened(token, target="tools/call:pay#d1").state == secret_bits


def test_each_seal_uses_a_fresh_nonce():
    assert sealed() != sealed()


def _flip(token: str, at: int) -> str:
    char = "A" if token[at] != "A" else "B"
    return token[:at] + char + token[at + 1 :]


@pytest.mark.parametrize(
    ("token", "options"),
    [
        ("garbage", {}),
        ("a.b.c", {}),
        ("!!.??", {}),
        (None, {}),
        ("", {}),
        ("x" * 70_000, {}),
        (sealed() + "-TAMPERED", {}),
        (sealed()[:-4], {}),
        (sealed()[:30], {}),
        (_flip(sealed(), 5), {}),
        (_flip(sealed(), 30), {}),
        (_flip(sealed(), -3), {}),
        (sealed(), {"target": "tools/call:other#d1"}),
        (sealed(), {"target": "tools/call:t#d2"}),
        (sealed(), {"principal": "mallory"}),
        (sealed(), {"principal": None}),
        (sealed(), {"now": 300}),
        (sealed(expires=-5), {"now": 1}),
    ],
)
def test_untrusted_state_is_refused(token, options):
    with pytest.raises(StateError):
        opened(token, **options)


def test_the_expiry_in_clear_is_authenticated_too():
    token = sealed()
    raw = bytearray(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    raw[5:13] = (10**9).to_bytes(8, "big")  # push the expiry far out
    forged = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    with pytest.raises(StateError, match="tampered"):
        opened(forged, now=300)


def test_another_secret_cannot_open_it():
    with pytest.raises(StateError):
        opened(sealed(), keys=StateKeys([b"z" * 32]))


OLD = b"o" * 32
NEW = b"n" * 32


def test_rotation_state_sealed_by_the_old_key_opens_after_a_new_one_is_put_first():
    before = sealed(StateKeys([OLD]))
    rotated = StateKeys([NEW, OLD])
    assert opened(before, keys=rotated) == Round(state={"step": 1})
    after = sealed(rotated)
    assert opened(after, keys=rotated) == Round(state={"step": 1})
    with pytest.raises(StateError):  # the new first key seals, not the old one
        opened(after, keys=StateKeys([OLD]))


def test_rotation_state_of_a_removed_key_no_longer_opens():
    before = sealed(StateKeys([OLD]))
    with pytest.raises(StateError, match="tampered"):
        opened(before, keys=StateKeys([NEW]))


def test_keys_are_needed():
    with pytest.raises(ValueError, match="at least one"):
        StateKeys([])


def test_string_secrets_are_their_utf8_bytes():
    token = sealed(StateKeys(["k" * 32]))
    assert opened(token) == Round(state={"step": 1})


def test_payload_is_compact_json():
    # the sealed size tracks the JSON size: 13+12+16 bytes of overhead
    state = {"x": "y" * 300}
    token = seal(KEYS, state, target="t", principal=None, expires=1)
    payload = len(json.dumps({"s": state}, separators=(",", ":")))
    assert len(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))) == (
        payload + 13 + 12 + 16
    )
