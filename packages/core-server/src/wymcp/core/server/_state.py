"""Sealed `requestState` for 2026-07-28 input requests.

The state a tool carries between rounds travels through the client, so it is
sealed with HMAC-SHA256 under the engine's secret and bound to the method,
the tool (or prompt, or URI), the principal and an expiry.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any, Final

from wymcp.core.server._session import principal_key

MAX_STATE: Final = 65_536
"""Longest requestState accepted, in characters."""


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
) -> str:
    """Seal `state` for the request aimed at `target` (e.g. "tools/call:x")."""
    payload = json.dumps(
        {"s": state, "t": target, "p": _fingerprint(principal), "x": int(expires)},
        separators=(",", ":"),
        ensure_ascii=True,
    ).encode()
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
) -> Any:
    """The state sealed in `token`; StateError when it cannot be trusted."""
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
    return data.get("s")
