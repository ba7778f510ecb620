"""Mount wymcp in an aiohttp application, or build one (`setup`, `create_app`).

`setup` adds the endpoint's route, `/healthz`, `/readyz` and (METRICS) the
metrics route, and their lifecycle callbacks (closing the engine, entering
LIFESPAN) and stores its state under private `web.AppKey`s: the host application's
routes and middlewares are left as they were. Settings are read here, at setup.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from aiohttp import web

from wymcp.conf import Settings, enter_lifespan, load_settings, served_engine
from wymcp.core.server import ServedEngine
from wymcp.transport.aiohttp._endpoint import Endpoint
from wymcp.transport.aiohttp._health import LIVE_PATH, READY_PATH

logger = logging.getLogger("wymcp.transport.aiohttp")

ENDPOINT_KEY = web.AppKey("wymcp_endpoint", Endpoint)


def _settings(settings: Settings | None, overrides: dict[str, object]) -> Settings:
    if settings is None:
        return load_settings(None, **overrides)
    return settings.evolve(**overrides) if overrides else settings


def mount(app: web.Application, settings: Settings, engine: ServedEngine) -> Endpoint:
    """Serve `engine` at `settings.PATH` in `app` and close it on cleanup."""
    if ENDPOINT_KEY in app:
        raise RuntimeError("wymcp is already set up on this application.")
    endpoint = Endpoint(settings, engine)
    app[ENDPOINT_KEY] = endpoint
    app.router.add_route(
        "*",
        settings.PATH,
        endpoint.handle,
        expect_handler=endpoint.expect,
    )
    health = endpoint.health
    # Readiness fails first at shutdown, before the sessions end.
    app.on_shutdown.append(health.drain)
    app.router.add_get(LIVE_PATH, health.live, allow_head=False)
    app.router.add_get(READY_PATH, health.ready, allow_head=False)
    if endpoint.metrics is not None:
        core: Any = getattr(engine, "engine", engine)  # a brokered engine wraps it
        if hasattr(core, "session_ended"):
            core.session_ended = endpoint.metrics.session_ended
        app.router.add_get(settings.METRICS_PATH, endpoint.scrape, allow_head=False)
        app.cleanup_ctx.append(endpoint.metrics.probe(engine))
        # a broker's engine times its own Redis round trips for the metrics
        observe = getattr(engine, "observe_round_trips", None)
        if observe is not None:
            observe(endpoint.metrics.broker_round_trip)
        app.on_cleanup.append(endpoint.scrapes.close)
    if endpoint.auth is not None:
        for path in endpoint.auth.metadata.paths():
            app.router.add_get(path, endpoint.metadata)

    async def close_engine(_app: web.Application) -> None:
        try:
            await engine.aclose()
        except Exception:
            logger.exception("wymcp: closing the engine failed")

    # At shutdown the sessions end, so their GET streams close and do not hold
    # up the grace period; at cleanup, in case shutdown never ran.
    app.on_shutdown.append(close_engine)
    app.on_cleanup.append(close_engine)
    if getattr(settings, "LIFESPAN", None) is not None:
        app.cleanup_ctx.append(lifespan_context(settings, engine))
    return endpoint


def lifespan_context(
    settings: Settings, engine: ServedEngine
) -> Callable[[web.Application], AsyncIterator[None]]:
    """The cleanup context entering LIFESPAN at startup, left at cleanup.

    `enter_lifespan` (wymcp.conf) does it, as for every other transport.
    """
    served: Any = engine  # the core engine has `state`; the protocol need not

    async def run(_app: web.Application) -> AsyncIterator[None]:
        async with enter_lifespan(settings, served):
            yield

    return run


def setup(
    app: web.Application, settings: Settings | None = None, **overrides: object
) -> None:
    """Mount the MCP endpoint in an existing application, before it starts.

    `settings` defaults to `load_settings()` (the module named by
    `WYMCP_SETTINGS_MODULE`, else the defaults); UPPERCASE `overrides` are
    checked and applied on top. Raises `wymcp.conf.ImproperlyConfigured` or
    `wymcp.core.schema.ConfigurationError` naming what is wrong.
    """
    chosen = _settings(settings, overrides)
    mount(app, chosen, served_engine(chosen)[1])


def create_app(
    settings: Settings | None = None, **overrides: object
) -> web.Application:
    """Return a new application serving the MCP endpoint (see `setup`).

    Works as a gunicorn factory: `gunicorn "wymcp.transport.aiohttp:create_app()"
    -k aiohttp.GunicornWebWorker` with `WYMCP_SETTINGS_MODULE` set.
    """
    app = web.Application()
    setup(app, settings, **overrides)
    return app


def get_endpoint(app: web.Application) -> Endpoint:
    """Return the endpoint `setup` mounted, or raise if it was never called."""
    try:
        return app[ENDPOINT_KEY]
    except KeyError:
        raise RuntimeError(
            "wymcp is not set up on this application; call "
            "wymcp.transport.aiohttp.setup(app) first."
        ) from None
