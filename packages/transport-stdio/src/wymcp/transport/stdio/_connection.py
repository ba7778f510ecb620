"""One stdio connection: each stdin line to the engine, each answer to stdout.

Requests run concurrently, one task each, and `notifications/cancelled` stops
one; a 2025 session opened by `initialize` lasts as long as the connection.
At the end of input, calls in flight get SHUTDOWN_GRACE seconds to finish.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from typing import Any, Final

from wymcp.core.server import (
    ID_TEXT_LIMIT,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    META_CAPABILITIES,
    META_VERSION,
    PARSE_ERROR,
    SESSION_HEADER,
    BodyError,
    Engine,
    Exchange,
    Headers,
    echoable_id,
    error_message,
    valid_id,
    yielding,
)
from wymcp.transport.stdio._json_line import decode_line
from wymcp.transport.stdio._line_reader import ChunkSource, LineReader, TooLong
from wymcp.transport.stdio._line_writer import LineStream, LineWriter

logger = logging.getLogger("wymcp.transport.stdio")

MAX_IN_FLIGHT: Final = 1024
"""Most requests one connection runs at once; one more is answered -32603."""
_OFF_LOOP: Final = 64 * 1024
"""Lines longer than this are decoded in a worker thread: `json` with hooks takes
about 1 us per object, so 4 MiB of `{}` would hold the loop for over a second."""
_CANCEL_WAIT: Final = 1.0
"""Seconds cancelled calls get to unwind at shutdown before they are left."""
_LEADING_ID = re.compile(
    rb'\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?[0-9]{1,19}|"[^"\\]{0,%d}")\s*[,}]'
    % ID_TEXT_LIMIT
)
"""The id of an oversized request, when it is the first (or second) member."""


def _request_id(value: object) -> str | int | None:
    """`value` when it is an id wymcp echoes (a bounded string or integer)."""
    return value if valid_id(value) else None


def leading_id(prefix: bytes) -> str | int | None:
    """The request id an oversized line starts with, if it is easy to see."""
    found = _LEADING_ID.match(prefix)
    if found is None:
        return None
    token = found.group(1)
    if token.startswith(b'"'):
        try:
            return token[1:-1].decode("utf-8")
        except UnicodeDecodeError:
            return None
    return _request_id(int(token))


_MODERN_META: Final = (META_VERSION, META_CAPABILITIES)


def _sessionless(body: dict[str, Any]) -> bool:
    """Whether a request needs a 2025 session: no 2026-07-28 `_meta`, not ping."""
    if body.get("method") == "ping":
        return False
    params = body.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return not (isinstance(meta, dict) and any(k in meta for k in _MODERN_META))


def _unanswerable(body: Any) -> bool:
    """Whether `body` is a notification or a response (answering them is wrong)."""
    if not isinstance(body, dict):
        return False
    if "method" in body:
        return "id" not in body
    return "id" in body and ("result" in body) != ("error" in body)


class Connection:
    """Serves one engine to one client over a pair of byte streams."""

    def __init__(
        self,
        engine: Engine,
        writer: LineWriter,
        *,
        body_limit: int,
        depth_limit: int,
        shutdown_grace: float,
    ) -> None:
        self._engine = engine
        self._writer = writer
        self._body_limit = body_limit
        self._depth_limit = depth_limit
        self._shutdown_grace = shutdown_grace
        self._headers = Headers.of(())
        self._in_flight: dict[str | int, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------- reading

    async def read(self, source: ChunkSource) -> None:
        """Serve every line of `source` until it ends or the client stops reading."""
        reader = LineReader(source, limit=self._body_limit)
        while not self._writer.gone:
            await self._writer.writable()
            line = await reader.next_line()
            if line is None:
                return
            try:
                await self._receive(line)
            except ConnectionError:
                return

    async def _receive(self, line: bytes | TooLong) -> None:
        if isinstance(line, TooLong):
            await self._writer.send(
                error_message(
                    leading_id(line.prefix),
                    INVALID_REQUEST,
                    "Request too large: the message exceeds BODY_LIMIT "
                    f"({self._body_limit} bytes) and was skipped.",
                )
            )
            return
        try:
            if len(line) <= _OFF_LOOP:
                body = decode_line(line, depth_limit=self._depth_limit)
            else:  # the hooks of `json` run Python code: the GIL returns to the loop
                decode = functools.partial(
                    decode_line, line, depth_limit=self._depth_limit
                )
                body = await asyncio.to_thread(yielding, decode)
        except BodyError as exc:
            await self._writer.send(
                error_message(None, PARSE_ERROR, f"Parse error: {exc.reason}")
            )
            return
        if isinstance(body, dict):
            method = body.get("method")
            if method == "notifications/cancelled" and "id" not in body:
                self._cancel(body.get("params"))
                return
            if "id" in body and isinstance(method, str) and method != "initialize":
                self._spawn(body)
                await asyncio.sleep(0)  # let it start (and fill stdout) first
                return
        try:
            await self._inline(body)
        except ConnectionError:
            raise
        except Exception:
            logger.exception("wymcp: unexpected error answering a message")
            await self._writer.send(
                error_message(
                    echoable_id(body),
                    INTERNAL_ERROR,
                    "Internal error. The server logged the cause.",
                )
            )

    # ------------------------------------------------------------ requests

    def _exchange(self, body: Any) -> Exchange:
        return Exchange("POST", self._headers, body, mirrored_headers=False)

    def _spawn(self, body: dict[str, Any]) -> None:
        rid = _request_id(body["id"])
        refusal = None
        if rid is not None and rid in self._in_flight:
            refusal = error_message(
                rid,
                INVALID_REQUEST,
                "Invalid Request: a request with this id is still in flight. "
                "Give every request its own id.",
            )
        elif self._headers.get(SESSION_HEADER) is None and _sessionless(body):
            refusal = error_message(
                rid,
                INVALID_REQUEST,
                "Invalid Request: no session. Send initialize first (2025 "
                "revisions), or carry the 2026-07-28 _meta in every request's "
                "params.",
            )
        elif len(self._tasks) >= MAX_IN_FLIGHT:
            refusal = error_message(
                rid,
                INTERNAL_ERROR,
                f"Server busy: {MAX_IN_FLIGHT} requests are in flight on this "
                "connection. Wait for answers before sending more.",
            )
        if refusal is not None:
            task = asyncio.ensure_future(self._writer.send(refusal))
            rid = None
        else:
            task = asyncio.ensure_future(self._call(body, self._exchange(body), rid))
            if rid is not None:
                self._in_flight[rid] = task
        self._tasks.add(task)
        task.add_done_callback(functools.partial(self._done, rid))

    def _done(self, rid: str | int | None, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if rid is not None and self._in_flight.get(rid) is task:
            del self._in_flight[rid]  # also when cancelled before it started
        if task.cancelled():
            return
        error = task.exception()
        if error is not None and not isinstance(error, ConnectionError):
            logger.error("wymcp: a stdio task failed", exc_info=error)

    async def _call(
        self, body: dict[str, Any], exchange: Exchange, rid: str | int | None
    ) -> None:
        try:
            reply = await self._engine.post(exchange, LineStream(self._writer))
            if reply.body is not None:
                await self._writer.send(reply.body)
        except asyncio.CancelledError:
            return  # cancelled by the client, or at shutdown: nothing more is sent
        except ConnectionError:
            return  # the client stopped reading
        except Exception:
            logger.exception("wymcp: unexpected error answering %s", body["method"])
            await self._writer.send(
                error_message(
                    rid, INTERNAL_ERROR, "Internal error. The server logged the cause."
                )
            )

    def _cancel(self, params: object) -> None:
        """Stop the request `params.requestId` names; nothing is sent for it."""
        rid = _request_id(params.get("requestId")) if isinstance(params, dict) else None
        task = self._in_flight.get(rid) if rid is not None else None
        if task is not None and not task.done():
            task.cancel()

    async def _inline(self, body: Any) -> None:
        """`initialize`, notifications, responses and malformed messages, in order."""
        reply = await self._engine.post(self._exchange(body), LineStream(self._writer))
        if isinstance(body, dict) and body.get("method") == "initialize":
            session_id = reply.headers.get(SESSION_HEADER)
            if session_id is not None:
                await self._session_opened(session_id)
        if reply.body is None:
            return
        if _unanswerable(body):
            logger.warning(
                "wymcp: a notification or response was refused: %s",
                str(reply.body.get("error", {}).get("message"))[:200],
            )
            return  # notifications and responses are never answered
        await self._writer.send(reply.body)

    # ------------------------------------------------------------- session

    async def _session_opened(self, session_id: str) -> None:
        """Use the new session from now on; end the one it replaces."""
        previous = self._headers
        self._headers = Headers.of([(SESSION_HEADER, session_id)])
        if previous.get(SESSION_HEADER) is not None:
            await self._engine.delete(Exchange("DELETE", previous))
        task = asyncio.ensure_future(self._session_stream(self._headers))
        self._tasks.add(task)
        task.add_done_callback(functools.partial(self._done, None))

    async def _session_stream(self, headers: Headers) -> None:
        """Write the session's change notifications until it ends."""
        try:
            await self._engine.get(
                Exchange("GET", headers, mirrored_headers=False),
                LineStream(self._writer),
            )
        except (asyncio.CancelledError, ConnectionError):
            return

    # ------------------------------------------------------------ shutdown

    async def shutdown(self) -> None:
        """End long-lived streams, let calls finish within the grace, close stdout."""
        try:
            await self._engine.aclose()
        except Exception:
            logger.exception("wymcp: closing the engine failed")
        if self._tasks:
            _, late = await asyncio.wait(set(self._tasks), timeout=self._shutdown_grace)
            for task in late:
                task.cancel()
            if late:
                logger.warning(
                    "wymcp: %d call(s) still running after SHUTDOWN_GRACE were "
                    "cancelled",
                    len(late),
                )
                await asyncio.wait(late, timeout=_CANCEL_WAIT)
        await self._writer.aclose()
