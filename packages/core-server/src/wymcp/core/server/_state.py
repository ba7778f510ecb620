"""Sealed `requestState` for 2026-07-28 input requests.

What a call carries between rounds (the tool's state, the answers of earlier
rounds, the round count) travels through the client, so it is sealed with
HMAC-SHA256 under the engine's secret and bound to the target, the principal
and an expiry.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from wymcp.core.server._session import principal_key

MAX_STATE: Final = 65_536
"""Longest requestState accepted (and sealed), in characters."""


@attrs.frozen
class Round:
    """What one round of a call hands the next through the client.

    `state` is the tool's own state; `answers` the answers of the questions
    already answered, one mapping per `ask`, in the order the tool asked;
    `partial` the answers already given to the question still open;
    `rounds` how many input_required results the call has answered so far.
    """

    state: Any = None
    answers: tuple[Mapping[str, Any], ...] = ()
    partial: Mapping[str, Any] = attrs.field(factory=dict)
    rounds: int = 0


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _fingerprint(principal: object | None) -> str | None:
    key = principal_key(principal)
    if key is None:
        return None
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def seal(
    secret: bytes,
    state: Any,
    *,
    target: str,
    principal: object | None,
    expires: float,
    answers: Sequence[Mapping[str, Any]] = (),
    partial: Mapping[str, Any] | None = None,
    rounds: int = 0,
) -> str:
    """Seal `state` for the request aimed at `target` (e.g. "tools/call:x").

    `answers`, `partial` and `rounds` are those of `Round`.
    """
    sealed: dict[str, Any] = {
        "s": state,
        "t": target,
        "p": _fingerprint(principal),
        "x": int(expires),
    }
    if answers:
        sealed["a"] = list(answers)
    if partial:
        sealed["q"] = dict(partial)
    if rounds:
        sealed["n"] = rounds
    payload = json.dumps(sealed, separators=(",", ":"), ensure_ascii=True).encode()
    mac = hmac.new(secret, payload, hashlib.sha256).digest()
    return f"{_b64(payload)}.{_b64(mac)}"


class StateError(ValueError):
    """A requestState that is malformed, tampered, foreign or expired."""


def unseal(
    secret: bytes,
    token: object,
    *,
    target: str,
    principal: object | None,
    now: float,
) -> Round:
    """The round sealed in `token`; StateError when it cannot be trusted."""
    if not isinstance(token, str) or len(token) > MAX_STATE or token.count(".") != 1:
        raise StateError("malformed")
    body, mac = token.split(".")
    try:
        payload = _unb64(body)
        sent_mac = _unb64(mac)
    except (binascii.Error, ValueError):
        raise StateError("malformed") from None
    expected = hmac.new(secret, payload, hashlib.sha256).digest()
    if not hmac.compare_digest(expected, sent_mac):
        raise StateError("tampered")
    data = json.loads(payload)
    if data.get("t") != target or data.get("p") != _fingerprint(principal):
        raise StateError("foreign")
    if not isinstance(data.get("x"), int) or data["x"] < now:
        raise StateError("expired")
    return Round(
        state=data.get("s"),
        answers=tuple(data.get("a", ())),
        partial=data.get("q", {}),
        rounds=data.get("n", 0),
    )
