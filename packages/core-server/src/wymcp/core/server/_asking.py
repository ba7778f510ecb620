"""Asking the client (elicitation, sampling, roots) at each revision.

At 2025 a question is a JSON-RPC request on the call's SSE stream, answered
by a POSTed response. At 2026-07-28 it is an `input_required` result the
client answers by retrying the request with `inputResponses`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any, Final

from wymcp.core.server._call import Call
from wymcp.core.server._call_tool import InputRequired
from wymcp.core.server._exchange import Stream
from wymcp.core.server._jsonrpc import asked_id, invalid_params, missing_capability
from wymcp.core.server._middleware import Spans
from wymcp.core.server._options import EngineOptions
from wymcp.core.server._revision import META_LOG_LEVEL, Revision
from wymcp.core.server._session import Session
from wymcp.core.server._stateless_request_state import (
    MAX_STATE,
    Round,
    StateError,
    StateKeys,
    seal,
    unseal,
)
from wymcp.core.server._tool_context import (
    CAPABILITY_OF,
    Asker,
    ClientRequestError,
    InputRequest,
    MissingCapabilityError,
    ToolContext,
    require_capabilities,
)

MAX_QUESTIONS: Final = 64
"""Most questions one 2025 session has outstanding at once (each call asks one
at a time); one more fails its tool at once (`ClientRequestError` "busy")."""

MAX_ROUNDS: Final = 10
"""Most input_required results one call may answer (the SDK client's default
cap is ten too); one more question answers isError instead."""


def _answered(responses: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    answer = responses.get(key)
    return answer if isinstance(answer, dict) else None


class _Replay:
    """The questions of one run of a 2026 call, replayed from the sealed round.

    The tool runs again from the start on every retry. Its earlier `ask`s get
    the recorded answers in order (an ask whose keys the next recorded step
    lacks is a new question: a tool may skip steps by its state); the first
    new question is answered by the retry's `inputResponses`, and the next
    one ends the run with an input_required result carrying every answer so
    far, sealed.
    """

    def __init__(
        self,
        capabilities: Mapping[str, Any],
        responses: Mapping[str, Any],
        recorded: Round,
        seal: Callable[[Any, Round], str],
        spans: Spans | None = None,
    ) -> None:
        self._capabilities = capabilities
        self._spans = spans
        self._responses = responses
        self._recorded = recorded
        self._seal = seal
        self._cursor = 0
        self._fresh = True
        self._transcript: list[Mapping[str, Any]] = []

    def _request(self, request: InputRequest) -> dict[str, Any]:
        """The wire shape of a question, with the trace context when traced."""
        shape = request.to_json()
        return shape if self._spans is None else _carry_context(shape, self._spans)

    def _replayed(self, keys: list[str]) -> dict[str, dict[str, Any]] | None:
        answers = self._recorded.answers
        if self._cursor >= len(answers):
            return None
        step = answers[self._cursor]
        if not all(isinstance(step.get(key), dict) for key in keys):
            return None
        self._cursor += 1
        self._transcript.append(step)
        return {key: step[key] for key in keys}

    def _given(self, requests: dict[str, InputRequest]) -> dict[str, dict[str, Any]]:
        """Answers to the first new question: the retry's, or kept from before."""
        given: dict[str, dict[str, Any]] = {}
        if not self._fresh:
            return given
        self._fresh = False
        for key in requests:
            answer = _answered(self._responses, key)
            if answer is None:
                answer = _answered(self._recorded.partial, key)
            if answer is not None:
                given[key] = answer
        return given

    def _input_required(
        self,
        pending: dict[str, InputRequest],
        given: dict[str, dict[str, Any]],
        state: Any,
    ) -> InputRequired:
        rounds = self._recorded.rounds + 1
        if rounds > MAX_ROUNDS:
            raise ClientRequestError(
                "too_many_rounds",
                f"The call asked the client more than {MAX_ROUNDS} rounds of "
                "questions; ask several things at once with ctx.ask.",
            )
        result: dict[str, Any] = {
            "resultType": "input_required",
            "inputRequests": {k: self._request(r) for k, r in pending.items()},
        }
        if state is not None or self._transcript or given or rounds > 1:
            token = self._seal(
                state, Round(None, tuple(self._transcript), given, rounds)
            )
            if len(token) > MAX_STATE:
                raise ClientRequestError(
                    "state_too_large",
                    "The answers gathered so far and the tool's state take more "
                    f"than {MAX_STATE} characters of requestState; ask for less.",
                )
            result["requestState"] = token
        return InputRequired(result)

    async def __call__(
        self, requests: dict[str, InputRequest], state: Any
    ) -> dict[str, dict[str, Any]]:
        """Answer `requests` from the recorded round or the retry, else end the run."""
        require_capabilities(requests.values(), self._capabilities)
        replayed = self._replayed(list(requests))
        if replayed is not None:
            return replayed
        given = self._given(requests)
        pending = {k: r for k, r in requests.items() if k not in given}
        if not pending:
            self._transcript.append(given)
            return given
        raise self._input_required(pending, given, state)


def _carry_context(request: dict[str, Any], spans: Spans) -> dict[str, Any]:
    """`request` with the current trace context in its `params._meta` (TRACING)."""
    params = request["params"] = dict(request.get("params") or {})
    meta = params["_meta"] = dict(params.get("_meta") or {})
    spans.inject(meta)
    return request


def session_asker(
    session: Session,
    revision: Revision,
    stream: Stream,
    timeout: float,
    spans: Spans | None = None,
) -> Asker:
    """Send each question as a request on the call's stream and await it.

    Traced (`spans`), each request carries the trace context in `params._meta`.
    """

    async def one(request: InputRequest) -> dict[str, Any]:
        needed = CAPABILITY_OF.get(request.method)
        if (
            needed is None
            or needed not in session.client_capabilities
            or (needed == "elicitation" and not revision.titles)
        ):
            raise ClientRequestError(
                "not_supported",
                f"The client did not declare the '{needed}' capability.",
            )
        if len(session.pending) >= MAX_QUESTIONS:
            raise ClientRequestError(
                "busy",
                f"The session already waits for {MAX_QUESTIONS} answers "
                "from the client.",
            )
        rid = asked_id()
        future: asyncio.Future[dict[str, Any]] = (
            asyncio.get_running_loop().create_future()
        )
        session.pending[rid] = future
        try:
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
            message.update(request.to_json())
            if spans is not None:
                _carry_context(message, spans)
            try:
                await stream.send(message)
            except Exception:  # noqa: BLE001 - the client went away
                raise ClientRequestError(
                    "disconnected", "The client's stream is gone."
                ) from None
            try:
                return await asyncio.wait_for(future, timeout)
            except TimeoutError:
                raise ClientRequestError(
                    "timeout", "The client did not answer in time."
                ) from None
            except asyncio.CancelledError:
                if session.closed:
                    raise ClientRequestError(
                        "disconnected", "The session ended."
                    ) from None
                raise
        finally:
            session.pending.pop(rid, None)
            future.cancel()  # given up, if not answered: its watchers learn it

    async def ask(
        requests: dict[str, InputRequest], state: Any
    ) -> dict[str, dict[str, Any]]:
        del state
        return {key: await one(request) for key, request in requests.items()}

    return ask


def _bound(call: Call, target: str) -> str:
    """`target` and a digest of the call's arguments.

    Answers recorded for one call are never replayed into one with others.
    """
    arguments = call.params.get("arguments")
    canonical = json.dumps(
        {} if arguments is None else arguments,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
        default=repr,
    )
    return f"{target}#{hashlib.sha256(canonical.encode()).hexdigest()[:32]}"


_FIRST: Final = Round()
"""The round of a call that is no retry (nothing recorded, nothing answered)."""
_SECOND: Final = Round(rounds=1)
"""The round of a retry of a first round that sealed nothing."""


def _round(
    call: Call, target: str, keys: StateKeys, now: float
) -> tuple[Round, Mapping[str, Any]]:
    """The verified round and the responses of a 2026 retry."""
    if not call.revision.stateless:
        return _FIRST, {}
    responses = call.params.get("inputResponses")
    if responses is None:
        responses = {}
    if not isinstance(responses, dict):
        raise invalid_params("inputResponses must be an object.")
    token = call.params.get("requestState")
    if token is None:
        # A retry of a first round that sealed nothing: one round answered.
        return _SECOND if responses else _FIRST, responses
    try:
        recorded = unseal(
            keys,
            token,
            target=_bound(call, target),
            principal=call.principal,
            now=now,
        )
    except StateError:
        raise invalid_params(
            "Invalid requestState: it is malformed, altered, meant for "
            "another request, or expired. Start the request again."
        ) from None
    return recorded, responses


class Contexts:
    """Builds the `ctx` of each call for one engine.

    `server` is the engine: each `ctx.server`, and its `state` (what the
    lifespan yielded) read when the call starts.
    """

    def __init__(self, *, keys: StateKeys, options: EngineOptions, server: Any) -> None:
        self._keys = keys
        self._options = options
        self._server = server

    def __call__(self, call: Call, kind: str = "", name: str = "") -> ToolContext:
        """The `ctx` of `call`; its target, `kind` + `name`, binds its state.

        The target ("tools/call:" and the tool's name) is made only when the
        call's state is read or sealed.

        The revision chooses how it asks the client: an input_required replay
        when stateless, requests on the call's stream in a session. The asker
        is built when the tool first asks (most never do).
        """
        session = call.session
        params = call.params
        if "requestState" in params or "inputResponses" in params:
            recorded, responses = _round(
                call, kind + name, self._keys, self._options.wall_clock()
            )
        else:  # no retry (`_round`'s answer, without building it)
            recorded, responses = _FIRST, {}
        asker: Callable[[], Asker] | None = None
        if call.revision.stateless:
            level = call.meta.get(META_LOG_LEVEL)
            log_enabled = level is not None
            threshold = level if isinstance(level, str) else None
            asker = partial(self._replay, call, kind, name, responses, recorded)
        else:
            log_enabled = True
            threshold = session.log_level if session is not None else None
            if session is not None and call.stream is not None:
                asker = partial(
                    session_asker,
                    session,
                    call.revision,
                    call.stream,
                    self._options.client_request_timeout,
                    call.record.spans if call.record is not None else None,
                )
        server = self._server
        # positional, in `ToolContext`'s order: keywords to a class make CPython
        # build a dict of them for every call (~7k instructions)
        return ToolContext(
            call.id,
            session.id if session is not None else None,
            call.version,
            call.meta,
            call.principal,
            call.capabilities,
            call.stream,
            log_enabled,
            threshold,
            None,  # asker: built on the first question, by `make_asker`
            asker,
            None,  # tool and action: `call_tool` sets them
            None,
            server.state,
            server,
            recorded.state,
        )

    def _replay(
        self,
        call: Call,
        kind: str,
        name: str,
        responses: Mapping[str, Any],
        recorded: Round,
    ) -> Asker:
        """The asker of a stateless call, built on its first question.

        What it seals expires `STATE_TTL` seconds after it is sealed.
        """
        keys, options = self._keys, self._options
        target = kind + name

        def sealer(value: Any, carried: Round) -> str:
            return seal(
                keys,
                value,
                target=_bound(call, target),
                principal=call.principal,
                expires=options.wall_clock() + options.state_ttl,
                answers=carried.answers,
                partial=carried.partial,
                rounds=carried.rounds,
            )

        spans = call.record.spans if call.record is not None else None
        return _Replay(call.capabilities, responses, recorded, sealer, spans)


async def answer_asking(run: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    """Run a handler that may ask the client.

    It answers its input_required result, or -32021 for a capability the
    request did not declare.
    """
    try:
        return await run
    except (InputRequired, MissingCapabilityError) as asked:
        return asking_result(asked)


def asking_result(asked: InputRequired | MissingCapabilityError) -> dict[str, Any]:
    """The input_required result; -32021 for a capability not declared."""
    if isinstance(asked, InputRequired):
        return asked.result
    raise missing_capability(asked.required) from None
