"""The frozen value holding every wymcp setting, stored on the app, never global."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

import attrs

from wymcp.conf import _defaults
from wymcp.conf._check_message import ERROR, CheckMessage
from wymcp.conf._improperly_configured import ImproperlyConfigured
from wymcp.conf._validation import convert, sort_names

AUTH_WITHOUT_SERVERS = "wymcp.E007"
TWO_STATE_SECRET_SETTINGS = "wymcp.E009"  # noqa: S105 - a check id, not a secret

if TYPE_CHECKING:
    from wymcp.core.server import TokenValidator


def _random_secret() -> bytes:
    return secrets.token_bytes(32)


@attrs.frozen
class Settings:
    """Every wymcp setting, checked and converted (see `docs/settings.md`).

    Build one with `load_settings()`; `Settings()` gives the defaults.
    `explicit` names the settings the user set, `unknown` the UPPERCASE names
    of the settings module that are no wymcp setting (warnings of `wymcp
    check`), `module` the settings module read, if any.
    """

    TOOLS: tuple[object, ...] = _defaults.TOOLS
    RESOURCES: tuple[object, ...] = _defaults.RESOURCES
    PROMPTS: tuple[object, ...] = _defaults.PROMPTS
    BODY_LIMIT: int = _defaults.BODY_LIMIT
    BODY_MEMORY_BUDGET: int | None = _defaults.BODY_MEMORY_BUDGET
    BODY_TIMEOUT: float = _defaults.BODY_TIMEOUT
    HEADER_TIMEOUT: float = _defaults.HEADER_TIMEOUT
    MAX_CONNECTIONS: int = _defaults.MAX_CONNECTIONS
    WRITE_TIMEOUT: float = _defaults.WRITE_TIMEOUT
    ACCEPT_CONTENT_ENCODING: tuple[str, ...] = _defaults.ACCEPT_CONTENT_ENCODING
    JSON_DEPTH_LIMIT: int = _defaults.JSON_DEPTH_LIMIT
    STRICT: bool = _defaults.STRICT
    HOST: str = _defaults.HOST
    PORT: int = _defaults.PORT
    PATH: str = _defaults.PATH
    ALLOWED_HOSTS: tuple[str, ...] = _defaults.ALLOWED_HOSTS
    ALLOWED_ORIGINS: tuple[str, ...] = _defaults.ALLOWED_ORIGINS
    AUTH: TokenValidator | None = None  # _defaults.AUTH, as a validator
    AUTH_AUTHORIZATION_SERVERS: tuple[str, ...] = _defaults.AUTH_AUTHORIZATION_SERVERS
    AUTH_RESOURCE: str | None = _defaults.AUTH_RESOURCE
    AUTH_SCOPES_SUPPORTED: tuple[str, ...] = _defaults.AUTH_SCOPES_SUPPORTED
    AUTH_REQUIRED_SCOPES: tuple[str, ...] = _defaults.AUTH_REQUIRED_SCOPES
    SERVER_NAME: str = _defaults.SERVER_NAME
    SERVER_VERSION: str = _defaults.SERVER_VERSION
    INSTRUCTIONS: str | None = _defaults.INSTRUCTIONS
    PROTOCOL_VERSIONS: tuple[str, ...] = _defaults.PROTOCOL_VERSIONS
    STATE_SECRET: bytes = attrs.field(factory=_random_secret, repr=False)
    STATE_SECRETS: tuple[bytes, ...] = attrs.field(default=(), repr=False)
    BROKER: str | None = _defaults.BROKER
    SESSION_IDLE_TIMEOUT: float = _defaults.SESSION_IDLE_TIMEOUT
    MAX_SESSIONS: int = _defaults.MAX_SESSIONS
    MAX_STREAMS: int = _defaults.MAX_STREAMS
    MAX_STREAMS_PER_CLIENT: int = _defaults.MAX_STREAMS_PER_CLIENT
    CALL_TIMEOUT: float | None = _defaults.CALL_TIMEOUT
    RESULT_LIMIT: int = _defaults.RESULT_LIMIT
    EXPOSE_EXCEPTION_MESSAGES: bool = _defaults.EXPOSE_EXCEPTION_MESSAGES
    TASK_TTL: float = _defaults.TASK_TTL
    TASK_POLL_INTERVAL: int = _defaults.TASK_POLL_INTERVAL
    MAX_TASKS: int = _defaults.MAX_TASKS
    MAX_TASKS_PER_PRINCIPAL: int = _defaults.MAX_TASKS_PER_PRINCIPAL
    TASK_LEASE: float = _defaults.TASK_LEASE
    PAGE_SIZE: int = _defaults.PAGE_SIZE
    KEEPALIVE_INTERVAL: float = _defaults.KEEPALIVE_INTERVAL
    SHUTDOWN_GRACE: float = _defaults.SHUTDOWN_GRACE
    ACCESS_LOG: bool = _defaults.ACCESS_LOG
    LIFESPAN: object | None = _defaults.LIFESPAN
    explicit: frozenset[str] = frozenset()
    unknown: tuple[str, ...] = ()
    module: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.STATE_SECRETS and "STATE_SECRET" in self.explicit:
            raise ImproperlyConfigured(
                [
                    CheckMessage(
                        ERROR,
                        TWO_STATE_SECRET_SETTINGS,
                        "STATE_SECRET and STATE_SECRETS are both set; only one "
                        "can say which key seals request state.",
                        "Keep STATE_SECRETS = [new_key, old_key] and remove "
                        "STATE_SECRET.",
                    )
                ]
            )
        if self.AUTH is not None and not self.AUTH_AUTHORIZATION_SERVERS:
            raise ImproperlyConfigured(
                [
                    CheckMessage(
                        ERROR,
                        AUTH_WITHOUT_SERVERS,
                        "AUTH is set but AUTH_AUTHORIZATION_SERVERS is empty, so "
                        "clients cannot learn where to get a token (RFC 9728 "
                        "needs at least one authorization server).",
                        'Write AUTH_AUTHORIZATION_SERVERS = ["https://auth.example.com"].',
                    )
                ]
            )

    def is_overridden(self, name: str) -> bool:
        """Whether the user set `name` (in the settings module or an override)."""
        return name in self.explicit

    def evolve(self, **overrides: object) -> Settings:
        """Return a copy with UPPERCASE `overrides` checked and applied.

        Raises `ImproperlyConfigured` naming every problem.
        """
        names, problems, _ = sort_names(overrides, strict=True)
        converted, invalid = convert({name: overrides[name] for name in names})
        problems += invalid
        if problems:
            raise ImproperlyConfigured(problems)
        explicit = self.explicit | frozenset(converted)
        if converted.get("STATE_SECRET", b"") is None:
            converted["STATE_SECRET"] = _random_secret()
            explicit -= {"STATE_SECRET"}
        return attrs.evolve(self, explicit=explicit, **converted)
