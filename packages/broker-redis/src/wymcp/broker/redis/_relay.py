"""The relayed form of a client's answer or cancel for the worker running its call.

A head (the session, the id answered or cancelled) precedes the body: a
worker reads the head, and only the one holding that question or call decodes
the body. Only answers to ids this server asks with, and cancels, are relayed;
a cancel is relayed as a short cancel of its own (`cancel_of`).
"""

from __future__ import annotations

import asyncio
import functools
import json
from typing import TYPE_CHECKING, Any, Final

import attrs

from wymcp.broker.redis._encoding import encode
from wymcp.core.server import ID_TEXT_LIMIT, Held, yielding

if TYPE_CHECKING:
    from wymcp.core.server import Session

RELAY_LIMIT: Final = 1024 * 1024
"""Most bytes of one relayed message (its JSON); a larger one is refused (413)."""
_HEAD_LIMIT: Final = 64 + 12 * ID_TEXT_LIMIT
"""Most bytes of a head: a session id, a kind, an id as ASCII JSON (a character
outside the BMP takes 12 bytes: two `\\u` escapes)."""
_OFF_LOOP: Final = 64 * 1024
"""Bodies above this many bytes are decoded in a worker thread."""
_REASON_LIMIT: Final = 1024
"""Most characters of a relayed cancel's `reason`; the rest is cut."""
_ANSWER: Final = "a"
_CANCEL: Final = "c"

Kind = Held
"""A relayed message's kind, as core's `answered_or_cancelled` names it."""


@attrs.frozen
class Relayed:
    """The head of a relayed message: whose it is, and where its body starts."""

    session_id: str
    kind: Kind
    key: str | int
    start: int

    def wanted_by(self, session: Session) -> bool:
        """Whether `session`'s question or call on this worker is the one meant."""
        return session.holds(self.kind, self.key)


def head_of(session_id: str, kind: Kind, key: str | int) -> bytes:
    """The head naming what a relayed message answers or cancels, and for whom."""
    return f"{session_id}\n{kind}{json.dumps(key)}\n".encode("ascii")


def pack(session_id: str, kind: Kind, key: str | int, body: Any) -> bytes | None:
    """The relayed form of `body`; None when it is over `RELAY_LIMIT` bytes."""
    data = encode(body)
    if len(data) > RELAY_LIMIT:
        return None
    return head_of(session_id, kind, key) + data


def cancel_of(key: str | int, body: Any) -> dict[str, Any]:
    """The cancel relayed for `body`: its request id and a reason cut short.

    Whatever else the client sent is left out, so a relayed cancel takes at
    most a few KiB however large the message POSTed.
    """
    params: dict[str, Any] = {"requestId": key}
    given = body.get("params") if isinstance(body, dict) else None
    reason = given.get("reason") if isinstance(given, dict) else None
    if isinstance(reason, str):
        params["reason"] = reason[:_REASON_LIMIT]
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


def unpack(payload: bytes) -> Relayed | None:
    """The head of a relayed message, read without its body; None if malformed."""
    first = payload.find(b"\n", 0, _HEAD_LIMIT)
    second = payload.find(b"\n", first + 1, _HEAD_LIMIT) if first > 0 else -1
    if second < 0:
        return None
    try:
        session_id = payload[:first].decode("ascii")
        kind = payload[first + 1 : first + 2].decode("ascii")
        key = json.loads(payload[first + 2 : second])
    except ValueError:
        return None
    if kind not in {_ANSWER, _CANCEL} or not (
        isinstance(key, str) or (isinstance(key, int) and not isinstance(key, bool))
    ):
        return None
    return Relayed(session_id, _ANSWER if kind == _ANSWER else _CANCEL, key, second + 1)


async def body_of(payload: bytes, head: Relayed) -> Any:
    """The relayed message itself, decoded off the loop when large; None if bad."""
    return await decode(payload[head.start :])


async def decode(data: bytes) -> Any:
    """A relayed message's JSON, decoded off the loop when large; None if bad."""
    try:
        if len(data) <= _OFF_LOOP:
            return json.loads(data)
        work = functools.partial(json.loads, data)
        return await asyncio.get_running_loop().run_in_executor(None, yielding, work)
    except (ValueError, RecursionError):
        return None
