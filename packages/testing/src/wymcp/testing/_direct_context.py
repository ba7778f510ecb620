"""`build_context`: the context of a direct call, and `DirectContext`, what it builds.

It says who calls and how (revision, capabilities, `_meta`, principal, log
level); `call()` sends the call with exactly that envelope. Handed straight
to a tool's `run_action`, it records the progress and log notifications the
tool sends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wymcp.core.server import MODERN, ToolContext, is_stateless
from wymcp.testing._recorder import Recorder


class DirectContext(ToolContext):
    """A `ToolContext` that records what a tool streams.

    `log_level` is the level the caller asked for (None: at 2026-07-28 no
    logs are sent, at the 2025 revisions every level is).
    """

    def __init__(
        self,
        *,
        request_id: str | int = 1,
        session_id: str | None = None,
        protocol_version: str = MODERN,
        meta: Mapping[str, Any] | None = None,
        principal: object | None = None,
        client_capabilities: Mapping[str, Any] | None = None,
        log_level: str | None = None,
        state: Any = None,
    ) -> None:
        self._recorder = Recorder()
        super().__init__(
            request_id=request_id,
            session_id=session_id,
            protocol_version=protocol_version,
            meta=dict(meta or {}),
            principal=principal,
            client_capabilities=dict(client_capabilities or {}),
            stream=self._recorder,
            log_enabled=log_level is not None or not is_stateless(protocol_version),
            log_threshold=log_level,
            state=state,
        )
        self.log_level = log_level

    @property
    def messages(self) -> list[Mapping[str, Any]]:
        """The notifications a tool sent through this context, in order."""
        return list(self._recorder.messages)


def build_context(
    *,
    protocol_version: str = MODERN,
    request_id: str | int = 1,
    session_id: str | None = None,
    meta: Mapping[str, Any] | None = None,
    progress_token: str | int | None = None,
    principal: object | None = None,
    client_capabilities: Mapping[str, Any] | None = None,
    log_level: str | None = None,
    state: Any = None,
) -> DirectContext:
    """Return the context of a direct call.

    Pass it to `wymcp.testing.call(..., ctx=...)`: the call goes through the
    engine with this envelope (revision, `_meta` with `progress_token`,
    capabilities, log level, principal), so it meets the same gates and gets
    the same answer as over the wire. `session_id` is only informative: at
    the 2025 revisions the engine opens a session of its own. `state` is
    the call's `ctx.state`, standing for what `LIFESPAN` would yield.
    """
    shown = dict(meta or {})
    if progress_token is not None:
        shown["progressToken"] = progress_token
    return DirectContext(
        request_id=request_id,
        session_id=session_id,
        protocol_version=protocol_version,
        meta=shown,
        principal=principal,
        client_capabilities=client_capabilities,
        log_level=log_level,
        state=state,
    )
