"""The one composition function: the engine every runner serves, from settings.

Over HTTP with `BROKER`, the broker its scheme names in `BROKERS` (the channels
`BACKEND` pattern) wraps the engine; it is imported by name here, so nothing
imports it statically and it is needed only when `BROKER` is set (E010).
"""

from __future__ import annotations

import importlib
import importlib.util
import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Literal, cast

from wymcp.conf._engine import build_engine
from wymcp.conf._problems import ERROR, CheckMessage, ImproperlyConfigured
from wymcp.conf._settings import Settings

if TYPE_CHECKING:
    from wymcp.core.server import Engine, ServedEngine

BROKER_CLIENT_MISSING: Final = "wymcp.E010"

_REDIS: Final = "wymcp.broker.redis:brokered_engine"
BROKERS: Final[Mapping[str, str]] = MappingProxyType(
    {"redis": _REDIS, "rediss": _REDIS, "unix": _REDIS}
)
"""Each `BROKER` URL scheme, and the `module:function` building its broker.

The function takes the settings and the URL and returns the engine it built
(`build_engine` with the broker's stores) and what serves it, the broker."""

BrokerFactory = Callable[[Settings, str], "tuple[Engine, ServedEngine]"]

Runner = Literal["http", "stdio", "in_process"]
"""Who serves the engine: an HTTP worker, one stdio process, or in-process
callers (`wymcp.testing`, `wymcp check`'s published sizes)."""


def _path_for(url: str) -> str:
    """The `module:function` of the broker `url` names (the setting admits these)."""
    return BROKERS[url.partition("://")[0]]


def _distribution(module: str) -> str:
    """The distribution shipping a wymcp module: `wymcp.a.b` is `wymcp-a-b`."""
    return module.replace(".", "-")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent namespace (`wymcp.broker`) is absent
        return False


def _not_installed(module: str, what: str) -> CheckMessage:
    distribution = _distribution(module)
    return CheckMessage(
        ERROR,
        BROKER_CLIENT_MISSING,
        f"BROKER is set but {what}.",
        f"Install it: pip install {distribution} (or, for this release, "
        '"wymcp-transport-aiohttp[redis]").',
    )


def broker_missing(url: str) -> CheckMessage | None:
    """E010: the broker `url` names is not installed; None when it is."""
    module = _path_for(url).partition(":")[0]
    if _installed(module):
        return None
    return _not_installed(
        module, f"the {_distribution(module)} package is not installed"
    )


def broker_factory(url: str) -> BrokerFactory:
    """The function building the broker `url`'s scheme names, imported now.

    Raises `ImproperlyConfigured` (E010) when its distribution, or a module
    it needs (installed without its dependencies), is not installed.
    """
    module, _, name = _path_for(url).partition(":")
    missing = broker_missing(url)
    if missing is not None:
        raise ImproperlyConfigured([missing])
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        what = f"{_distribution(module)} cannot import {exc.name or 'a module'}"
        raise ImproperlyConfigured([_not_installed(module, what)]) from exc
    return cast("BrokerFactory", getattr(loaded, name))


def served_engine(
    settings: Settings, *, runner: Runner = "http"
) -> tuple[Engine, ServedEngine]:
    """The engine built from `settings`, and what `runner` serves.

    Over HTTP without `BROKER` both are the engine; with it, the second is
    the broker its scheme names, sharing the engine's sessions, tasks,
    streams and rate limits with every worker. Over stdio the session is the
    connection itself: it never expires while the process runs (so
    SESSION_IDLE_TIMEOUT does not apply), and its one client may hold all of
    MAX_STREAMS. Neither stdio nor in-process callers use `BROKER`: there is
    no other worker to share with (its checks, E008 and E010, still apply
    where the runner checks settings). Raises as `build_engine` does, and
    `ImproperlyConfigured` (E010) when the broker is not installed.
    """
    if runner == "stdio":
        engine = _stdio_engine(settings)
        return engine, engine
    broker = settings.BROKER
    if broker is None or runner == "in_process":
        engine = build_engine(settings)
        return engine, engine
    return broker_factory(broker)(settings, broker)


def _stdio_engine(settings: Settings) -> Engine:
    """The engine of one stdio process: sessions without expiry, one client."""
    from wymcp.core.server import MemorySessionStore  # noqa: PLC0415 - see build_engine

    store = MemorySessionStore(
        idle_timeout=math.inf, max_sessions=settings.MAX_SESSIONS, clock=_no_clock
    )
    return build_engine(
        settings, session_store=store, max_streams_per_client=settings.MAX_STREAMS
    )


def _no_clock() -> float:
    return 0.0
