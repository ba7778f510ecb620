"""Sealing and opening requestState: AES-256-GCM today against the HMAC seal before.

Prints one JSON object (microseconds per seal and per open, best of five
rounds). The HMAC figures re-implement the previous seal (HMAC-SHA256 over
readable JSON) inline, so both run on the same payload in the same process.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable
from typing import Any

from wymcp.core.server._stateless_request_state import StateKeys, seal, unseal

SECRET = b"k" * 32
TARGET = "tools/call:checkout#0123456789abcdef0123456789abcdef"
STATE = {"cart": 1234, "step": "confirm", "card_last4": "4242"}
ANSWERS = ({"confirm": {"action": "accept", "content": {"ok": True}}},)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def hmac_seal() -> str:
    payload = json.dumps(
        {"s": STATE, "t": TARGET, "p": "alice", "x": 2_000_000_000, "a": ANSWERS},
        separators=(",", ":"),
    ).encode()
    mac = hmac.new(SECRET, payload, hashlib.sha256).digest()
    return f"{_b64(payload)}.{_b64(mac)}"


def hmac_open(token: str) -> Any:
    body, mac = token.split(".")
    payload = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    sent = base64.urlsafe_b64decode(mac + "=" * (-len(mac) % 4))
    expected = hmac.new(SECRET, payload, hashlib.sha256).digest()
    if not hmac.compare_digest(expected, sent):
        raise ValueError
    return json.loads(payload)


def best_us(run: Callable[[], object], loops: int) -> float:
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(loops):
            run()
        best = min(best, (time.perf_counter() - started) / loops)
    return round(best * 1e6, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--loops", type=int, default=20_000)
    args = parser.parse_args()
    keys = StateKeys([SECRET])
    rotated = StateKeys([b"n" * 32, b"o" * 32, SECRET])

    def aes_seal(chosen: StateKeys = keys) -> str:
        return seal(
            chosen,
            STATE,
            target=TARGET,
            principal="alice",
            expires=2_000_000_000,
            answers=ANSWERS,
        )

    token = aes_seal()
    old_key_token = aes_seal(StateKeys([SECRET]))
    hmac_token = hmac_seal()

    def aes_open(chosen: StateKeys = keys, sealed: str = token) -> object:
        return unseal(chosen, sealed, target=TARGET, principal="alice", now=0)

    result = {
        "aes_gcm_seal_us": best_us(aes_seal, args.loops),
        "aes_gcm_open_us": best_us(aes_open, args.loops),
        "aes_gcm_open_third_key_us": best_us(
            lambda: aes_open(rotated, old_key_token), args.loops
        ),
        "hmac_seal_us": best_us(hmac_seal, args.loops),
        "hmac_open_us": best_us(lambda: hmac_open(hmac_token), args.loops),
        "state_keys_init_us": best_us(lambda: StateKeys([SECRET]), args.loops // 10),
        "aes_gcm_token_chars": len(token),
        "hmac_token_chars": len(hmac_token),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
