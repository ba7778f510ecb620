"""Sealed `requestState` for 2026-07-28 input requests.

What a call carries between rounds (the tool's state, the answers of earlier
rounds, the round count) travels through the client, so it is encrypted and
authenticated (AES-256-GCM) and bound to the target, the principal and an
expiry; `StateKeys` holds the keys (derived at the first seal or open).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from wymcp.core.server._session import principal_key

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

MAX_STATE: Final = 65_536
"""Longest requestState accepted (and sealed), in characters."""

_VERSION: Final = 1
_HEADER: Final = struct.Struct(">BIQ")
"""Format version, key id, expiry (Unix seconds): in clear, authenticated."""
_NONCE: Final = 12
_TAG: Final = 16
_AES_INFO: Final = b"wymcp requestState AES-256-GCM v1"
_KID_INFO: Final = b"wymcp requestState key id v1"


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


def _derive(secret: bytes, info: bytes, length: int) -> bytes:
    from cryptography.hazmat.primitives import hashes  # noqa: PLC0415 - see StateKeys
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF  # noqa: PLC0415 - see StateKeys

    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=info).derive(
        secret
    )


class StateKeys:
    """The AES-GCM keys derived (HKDF-SHA256) from the state secrets.

    The first secret seals; every one opens, so a new secret is put first
    and an old one removed once the state it sealed has expired. The keys
    are derived when a state is first sealed or opened: a server that never
    asks its client anything never loads `cryptography`.
    """

    def __init__(self, secrets: Iterable[bytes | str]) -> None:
        self._raw = [s.encode() if isinstance(s, str) else bytes(s) for s in secrets]
        if not self._raw:
            raise ValueError("StateKeys needs at least one secret")
        self._ids: list[int] = []
        self._by_id: dict[int, list[AESGCM]] = {}

    def _derived(self) -> dict[int, list[AESGCM]]:
        if not self._by_id:
            from cryptography.hazmat.primitives.ciphers.aead import (  # noqa: PLC0415 - see StateKeys
                AESGCM,
            )

            ids: list[int] = []
            by_id: dict[int, list[AESGCM]] = {}
            for secret in self._raw:
                kid = int.from_bytes(_derive(secret, _KID_INFO, 4), "big")
                ids.append(kid)
                by_id.setdefault(kid, []).append(AESGCM(_derive(secret, _AES_INFO, 32)))
            self._ids, self._by_id = ids, by_id
        return self._by_id

    def sealing(self) -> tuple[int, AESGCM]:
        """The id and cipher of the key that seals."""
        by_id = self._derived()
        return self._ids[0], by_id[self._ids[0]][0]

    def opening(self, kid: int) -> list[AESGCM]:
        """The ciphers whose key carries id `kid` (none: a removed key)."""
        return self._derived().get(kid, [])


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _fingerprint(principal: object | None) -> str:
    key = principal_key(principal)
    if key is None:
        return ""
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _associated(header: bytes, target: str, principal: object | None) -> bytes:
    """What the tag binds besides the plaintext: header, target, principal."""
    return b"\0".join((header, target.encode(), _fingerprint(principal).encode()))


def seal(
    keys: StateKeys,
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

    `answers`, `partial` and `rounds` are those of `Round`. A fresh random
    96-bit nonce per seal; the token reveals only its length and expiry.
    """
    sealed: dict[str, Any] = {"s": state}
    if answers:
        sealed["a"] = list(answers)
    if partial:
        sealed["q"] = dict(partial)
    if rounds:
        sealed["n"] = rounds
    payload = json.dumps(sealed, separators=(",", ":"), ensure_ascii=True).encode()
    kid, aead = keys.sealing()
    header = _HEADER.pack(_VERSION, kid, max(0, int(expires)))
    nonce = os.urandom(_NONCE)
    cipher = aead.encrypt(nonce, payload, _associated(header, target, principal))
    return _b64(header + nonce + cipher)


class StateError(ValueError):
    """A requestState that is malformed, tampered, foreign or expired."""


def unseal(
    keys: StateKeys,
    token: object,
    *,
    target: str,
    principal: object | None,
    now: float,
) -> Round:
    """The round sealed in `token`; StateError when it cannot be trusted.

    A token sealed for another target or principal fails authentication,
    so it reads as tampered.
    """
    if not isinstance(token, str) or len(token) > MAX_STATE:
        raise StateError("malformed")
    try:
        raw = _unb64(token)
    except (binascii.Error, ValueError):
        raise StateError("malformed") from None
    if len(raw) < _HEADER.size + _NONCE + _TAG:
        raise StateError("malformed")
    header = raw[: _HEADER.size]
    version, kid, expires = _HEADER.unpack(header)
    if version != _VERSION:
        raise StateError("malformed")
    nonce = raw[_HEADER.size : _HEADER.size + _NONCE]
    cipher = raw[_HEADER.size + _NONCE :]
    associated = _associated(header, target, principal)
    from cryptography.exceptions import InvalidTag  # noqa: PLC0415 - see StateKeys

    for aead in keys.opening(kid):
        try:
            payload = aead.decrypt(nonce, cipher, associated)
        except InvalidTag:
            continue
        break
    else:
        raise StateError("tampered")
    if expires < now:
        raise StateError("expired")
    data = json.loads(payload)
    return Round(
        state=data.get("s"),
        answers=tuple(data.get("a", ())),
        partial=data.get("q", {}),
        rounds=data.get("n", 0),
    )
