"""Every wymcp setting, declared once: the frozen `Settings` class is the table.

Each field is a `setting(default, converter, doc, ...)`; the conversions, the
environment variables, the engine options and the docs table are read from
these declarations. To add a setting, add one field here (docs/settings.md).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from wymcp.conf._converters import (
    BROKER_URL,
    HOST_ENTRY,
    ORIGIN_ENTRY,
    URL_PATH,
    Boolean,
    Choices,
    Converter,
    Importable,
    Integer,
    ListOf,
    Matching,
    Seconds,
    Secret,
    Text,
    Url,
    context_manager_factory,
    middleware,
    object_or_path,
    patterns,
    scope,
    token_validator,
    unique,
)
from wymcp.conf._problems import ERROR, CheckMessage, ImproperlyConfigured
from wymcp.conf._rate_rules import rate_rule

if TYPE_CHECKING:
    from wymcp.core.server import TokenValidator

AUTH_WITHOUT_SERVERS: Final = "wymcp.E007"
TWO_STATE_SECRET_SETTINGS: Final = "wymcp.E009"  # noqa: S105 - a check id, not a secret

DEFAULT: Final = "default"
MODULE: Final = "module"
ENVIRONMENT: Final = "environment"
OVERRIDE: Final = "override"
"""Where a value came from, lowest precedence first (`Settings.origin`)."""

_DECLARATION: Final = "wymcp.setting"
PREFIX: Final = "WYMCP_"
"""What the environment variable of every setting starts with."""


@attrs.frozen
class Declaration:
    """What one setting is: its converter, its docs line, the engine option it feeds.

    `checks` names the checks across settings (warnings, E007…) for the docs
    table; `shown` replaces the default there; `secret` keeps the value out
    of reprs, messages and `wymcp check -v`.
    """

    name: str
    convert: Converter
    doc: str
    default: object
    checks: str = ""
    engine: str | None = None
    shown: str = ""
    secret: bool = False
    factory: Callable[[], object] | None = None

    def is_set_by(self, value: object) -> bool:
        """Whether giving `value` sets this setting (None asks for a made default)."""
        return not (value is None and self.factory is not None)

    @property
    def environment_variable(self) -> str:
        """The variable that overrides this setting: `WYMCP_<NAME>`."""
        return f"{PREFIX}{self.name}"


def setting(
    default: object,
    convert: Converter,
    doc: str,
    *,
    checks: str = "",
    engine: str | None = None,
    shown: str = "",
    secret: bool = False,
    factory: Callable[[], object] | None = None,
) -> Any:
    """Declare one setting (a field of `Settings`); see `Declaration`."""
    # A number's hints suggest its default ("Write PORT = 8000, for example.").
    unset = getattr(convert, "example", 0) is None
    if unset and isinstance(convert, Integer) and isinstance(default, int):
        convert = attrs.evolve(convert, example=default)
    if unset and isinstance(convert, Seconds) and isinstance(default, int | float):
        convert = attrs.evolve(convert, example=default)
    declared = Declaration(
        "", convert, doc, default, checks, engine, shown, secret, factory
    )
    metadata = {_DECLARATION: declared}
    if factory is not None:
        return attrs.field(factory=factory, repr=not secret, metadata=metadata)
    return attrs.field(default=default, repr=not secret, metadata=metadata)


_SERVED: Final = ListOf(
    item=object_or_path,
    what="a list or tuple (E001); dotted paths importable (E003)",
)
"""How RESOURCES and PROMPTS read: objects, or dotted paths to import."""

_LOG_FORMATS: Final = re.compile(r"text|json")
_OPEN_CLOSED: Final = re.compile(r"open|closed")
_LOOPS: Final = re.compile(r"asyncio|uvloop")

_SCOPES: Final = ListOf(
    item=scope, finish=unique, what="a list of OAuth scope tokens (E001/E004)"
)
"""How both scope settings read: distinct OAuth scope tokens."""


def _random_secret() -> bytes:
    return secrets.token_bytes(32)


def _supported_versions() -> tuple[str, ...]:
    """The revisions the engine speaks, newest first (imported when needed)."""
    from wymcp.core.server import SUPPORTED  # noqa: PLC0415 - keeps the import cheap

    return tuple(SUPPORTED)


@attrs.frozen
class Settings:
    """Every wymcp setting, checked and converted (see `docs/settings.md`).

    Build one with `load_settings()`; `Settings()` gives the defaults.
    `origins` says where each value the user set came from, `unknown` holds
    the UPPERCASE names of the settings module that are no wymcp setting
    (warnings of `wymcp check`), `module` the settings module read, if any.
    """

    TOOLS: tuple[object, ...] = setting(
        (),
        ListOf(
            item=object_or_path,
            what="a list or tuple (E001); each dotted path importable (E003)",
        ),
        (
            'The tools to serve: dotted paths (`"myapp.tools.Tasks"`), `Tool` '
            "subclasses or instances. `help` is always added."
        ),
        checks="each declaration servable (E006)",
    )
    RESOURCES: tuple[object, ...] = setting(
        (),
        _SERVED,
        ("Resources to serve: dotted paths or objects."),
        checks="each servable (E006)",
    )
    PROMPTS: tuple[object, ...] = setting(
        (),
        _SERVED,
        ("Prompts to serve: dotted paths or objects."),
        checks="each servable (E006)",
    )
    BODY_LIMIT: int = setting(
        4 * 1024 * 1024,
        Integer(low=1),
        (
            "The largest request body, in bytes. A larger one is answered 413 and "
            "never read past the limit, with or without `Content-Length`."
        ),
    )
    BODY_MEMORY_BUDGET: int | None = setting(
        4 * 1024 * 1024,
        Integer(low=1, optional=True),
        (
            "The most bytes of large request bodies (over 4 KiB each, counted as "
            "read and, if compressed, as inflated) the process holds at once, from "
            "the first byte read until the request's answer is sent (a call in "
            "flight holds its body). It is shared per client (the key "
            "`RATE_LIMITS` counts: token subject, else address, IPv6 by /64). A "
            "body is let in when its whole `Content-Length` fits, and holds it "
            "from its first counted byte (so a body that trickles holds its "
            "declared size, for at most `BODY_TIMEOUT`); one sent chunked, or "
            "compressed and not yet read whole, holds the most it may be "
            "(`BODY_LIMIT`, within the budget) till read, then its size. A "
            "body that does not fit, of a client holding none of the budget, "
            "waits its turn, unread (not counted as its sending time), one body "
            "per client, the clients in the order they came and ahead of any "
            "later body, up to `BODY_TIMEOUT` + `CALL_TIMEOUT` seconds for each "
            "body holding or waiting ahead of it when it came, and one more: each "
            "of those is read within `BODY_TIMEOUT` and its call ends within "
            "`CALL_TIMEOUT`, and a client coming back lands behind it, so bodies "
            "that trickle till their 408, or slow calls, in turn cannot run its "
            "wait out before its turn (with `CALL_TIMEOUT` `None` the wait counts "
            "`BODY_TIMEOUT` alone, and a long call ahead can; the bytes the "
            "waiting bodies "
            "have read stay within the budget too; a compressed body counts as "
            "sent, inflated once let in). A body whose client closes "
            "its connection gives back its bytes and its turn at once (under "
            "`wymcp serve` and `GunicornWorker`, which cancel the request's "
            "handler then). A body "
            "that still does not fit, that comes while its client holds bytes of "
            "the budget and it is full or others wait, is answered `503` with "
            "`Retry-After: {RETRY_AFTER}`, `Connection: close` and "
            'a -32603 "large request bodies being served fill BODY_MEMORY_BUDGET" '
            "body, and is read no further; bodies of at most 4 KiB are never "
            "counted nor refused by it. Decoded, a body costs up to about 38 times "
            "its bytes (60 times for a moment while its depth is checked), so at "
            "the default the bodies in flight cost at most about 160 MiB "
            "(`docs/security.md`, memory budget); the budget also bounds how long a"
            " garbage collection walks their objects. Raise it with `BODY_LIMIT` "
            "for many large calls at once. Over stdio it does not apply (one "
            "client). `None`: no budget."
        ),
        checks="below `BODY_LIMIT` warns (W013)",
    )
    BODY_TIMEOUT: float = setting(
        30.0,
        Seconds(),
        (
            "Seconds a client may take to send the whole body, counted from the "
            "first read after the headers; a body that trickles in is answered 408 "
            "and the connection closes. A wait for its turn of "
            "`BODY_MEMORY_BUDGET` is not counted, and lasts at most this and "
            "`CALL_TIMEOUT` for each body holding or waiting ahead of it when it "
            "came, and one more."
        ),
    )
    HEADER_TIMEOUT: float = setting(
        75.0,
        Seconds(),
        (
            "Seconds a connection may take to send a request's line and headers, "
            "counted from when it opens or from the end of its previous response "
            "(so an idle kept-alive connection is closed after it too; a body, a "
            "running call and an open stream are not affected). A connection that "
            "runs out is closed without an answer, which ends idle connections, "
            "trickled headers and half-sent request lines (slowloris). It is "
            "aiohttp's `keepalive_timeout`, applied by `wymcp serve` and "
            "`GunicornWorker`; when you run the application yourself, pass it to "
            "your `AppRunner`. The default sits above the 60 s idle timeout of "
            "nginx's and common load balancers' upstream connections: a proxy that "
            "reuses a connection just as wymcp closes it answers 502. Without a "
            "proxy, lower it (10 to 30 s) to shed slow clients sooner."
        ),
    )
    MAX_CONNECTIONS: int = setting(
        1000,
        Integer(low=1),
        (
            "The most connections `wymcp serve` keeps open at once (per worker "
            "under `GunicornWorker`). One more is answered at once `503` with "
            "`Retry-After: {RETRY_AFTER}`, `Connection: close` and a -32603 "
            '"too many open '
            'connections (MAX_CONNECTIONS)" body, then closed; its request is never'
            " read. Checked as each connection is accepted, so a burst accepted in "
            "one go can pass it by at most the listen backlog (128). Keep it below "
            "the process's file-descriptor limit (`ulimit -n`)."
        ),
    )
    WRITE_TIMEOUT: float = setting(
        30.0,
        Seconds(),
        (
            "Seconds a connection may go without its client taking any of the "
            "answer waiting to be sent. While more than the transport's high-water "
            "mark (64 KiB) of an answer or SSE stream is unsent, the backlog is "
            "checked every `WRITE_TIMEOUT` seconds; a check that finds it no "
            "smaller closes the connection at once (no answer), which frees the "
            "backlog and cancels the request's call. A client that reads, however "
            "slowly, is never cut. Applied by `wymcp serve` and `GunicornWorker`, "
            "like `HEADER_TIMEOUT`."
        ),
    )
    ACCEPT_CONTENT_ENCODING: tuple[str, ...] = setting(
        (),
        Choices(allowed=("deflate", "gzip"), noun="coding", verb="inflates"),
        (
            "The content codings a POST body may carry. `()`: a body with any "
            "`Content-Encoding` but `identity` is answered 415 / -32600 before it "
            'is read, and the connection closes. `("gzip", "deflate")` (either or '
            "both): such a body is inflated by wymcp, never past `BODY_LIMIT` (413)"
            " and never after a refusal; data that is not a whole stream of its "
            "coding is 400 / -32600. One coding per body: stacked codings (`gzip, "
            "gzip`) are 415."
        ),
    )
    JSON_DEPTH_LIMIT: int = setting(
        100,
        Integer(low=2, high=10_000),
        (
            "The deepest nesting of arrays and objects a body may have; deeper is "
            "answered 400 / -32700 before parsing."
        ),
    )
    STRICT: bool = setting(
        True,  # noqa: FBT003 - the default
        Boolean(),
        (
            "`True`: a tool call with keys its action does not declare is refused "
            "(`unknown_params`). `False` (lenient): the unknown keys are dropped "
            "and the call runs, and the result lists every dropped path under "
            '`_meta["wymcp/dropped"]` — never silently.'
        ),
        engine="strict",
    )
    HOST: str = setting(
        "127.0.0.1",
        Text(),
        ("The address `wymcp serve` listens on (`--host` overrides)."),
        checks="a non-loopback address with no `ALLOWED_HOSTS` warns (W003)",
    )
    PORT: int = setting(
        8000,
        Integer(low=0, high=65535),
        ("The port `wymcp serve` listens on (`--port` overrides)."),
    )
    PATH: str = setting(
        "/mcp",
        Matching(
            pattern=URL_PATH,
            must="be a URL path starting with '/', without a query, a fragment "
            "or spaces",
            example="/mcp",
            what="a string (E001) starting with `/`, without query, fragment or "
            "spaces (E004)",
        ),
        ("The endpoint's URL path."),
    )
    ALLOWED_HOSTS: tuple[str, ...] = setting(
        (),
        ListOf(
            item=patterns(HOST_ENTRY, "example.com:8000"),
            what="a list of strings (E001) of that shape (E004)",
        ),
        (
            "`Host` header values accepted besides the loopback names (`127.0.0.1`,"
            ' `localhost`, `[::1]`, any port, always accepted). Entries: `"name"` '
            '(any port), `"name:port"`, `"name:*"`, or `"*"` (no Host check). '
            "Origins on these hosts (http or https) are accepted too."
        ),
        checks='`"*"` warns (W004)',
    )
    ALLOWED_ORIGINS: tuple[str, ...] = setting(
        (),
        ListOf(
            item=patterns(ORIGIN_ENTRY, "https://example.com"),
            what="a list of strings (E001) of that shape (E004)",
        ),
        (
            "`Origin` header values accepted besides those on allowed hosts: "
            '`"https://app.example.com"` (any port), '
            '`"https://app.example.com:8443"`, `"…:*"`, or `"*"`. A request without'
            " `Origin` (not a browser) is not affected."
        ),
        checks='`"*"` warns (W004)',
    )
    AUTH: TokenValidator | None = setting(  # noqa: RUF009 - a field specifier
        None,
        Importable(accept=token_validator, what="one of those forms", optional=True),
        (
            "The token validator that makes the endpoint an OAuth 2.1 resource "
            "server (`docs/authorization.md`): an object with `async "
            "validate(token) -> Principal` (e.g. `JwtValidator(...)`), a class "
            "making one with no arguments, a plain or async function `token -> "
            "Principal`, or a dotted path to any of these. Every request (POST, "
            "GET, DELETE) then needs `Authorization: Bearer <token>`. `None` serves"
            " without authentication."
        ),
        checks=(
            "a class that can be made (E004); needs `AUTH_AUTHORIZATION_SERVERS` (E007)"
        ),
    )
    AUTH_AUTHORIZATION_SERVERS: tuple[str, ...] = setting(
        (),
        ListOf(
            item=Url(),
            what=(
                "a list of absolute http(s) URLs without fragment or quotes (E001/E004)"
            ),
        ),
        (
            "The authorization servers (issuer URLs) published in the "
            "protected-resource metadata."
        ),
        checks="at least one when `AUTH` is set (E007)",
    )
    AUTH_RESOURCE: str | None = setting(
        None,
        Url(optional=True),
        (
            "This server's resource identifier (RFC 8707), the audience its tokens "
            'must name, e.g. `"https://mcp.example.com/mcp"`. It is the metadata\'s '
            "`resource`, and its path decides the path-suffixed metadata URL. "
            "`None`: `scheme://Host` of each request plus `PATH`."
        ),
        checks="unset with `AUTH` warns (W006)",
    )
    AUTH_SCOPES_SUPPORTED: tuple[str, ...] = setting(
        (),
        _SCOPES,
        (
            "The metadata's `scopes_supported`. Empty: every scope named by "
            "`AUTH_REQUIRED_SCOPES` and the tools' `scopes` declarations."
        ),
        checks="`offline_access` warns (W007)",
    )
    AUTH_REQUIRED_SCOPES: tuple[str, ...] = setting(
        (),
        _SCOPES,
        (
            "Scopes every request needs, whatever it asks for (a token without them"
            " gets 403). The 401 challenge names them in `scope`."
        ),
        checks="`offline_access` warns (W007)",
    )
    SERVER_NAME: str = setting(
        "wymcp",
        Text(),
        ("`serverInfo.name` in `initialize` and `server/discover`."),
        engine="server_name",
    )
    SERVER_VERSION: str = setting(
        "0.1.0",
        Text(),
        ("`serverInfo.version`."),
        engine="server_version",
    )
    SERVER_TITLE: str | None = setting(
        None,
        Text(optional=True),
        "`serverInfo.title`, a display name for people (2025-06-18 and later). "
        "`None`: no title.",
        engine="server_title",
    )
    INSTRUCTIONS: str | None = setting(
        None,
        Text(optional=True),
        ("Free text a client may hand its model on connecting."),
        engine="instructions",
    )
    PROTOCOL_VERSIONS: tuple[str, ...] = setting(
        None,
        Choices(
            allowed=_supported_versions,
            noun="revision",
            at_least_one=True,
            newest_first=True,
        ),
        (
            "The MCP revisions served: any of `2026-07-28`, `2025-11-25`, "
            "`2025-06-18`, `2025-03-26`."
        ),
        engine="protocol_versions",
        factory=_supported_versions,
        shown="all four, newest first",
    )
    STATE_SECRET: bytes = setting(
        None,
        Secret(optional=True),
        (
            "The key that seals (AES-256-GCM: encrypted and authenticated) the "
            "request state handed to clients; shorthand for a one-key "
            "`STATE_SECRETS`. `None` makes a random 32-byte key when the settings "
            "are loaded, so it differs per process."
        ),
        checks=(
            "unset warns (W002), or is an error with `BROKER` (E008); not with "
            "`STATE_SECRETS` (E009)"
        ),
        engine="state_secret",
        factory=_random_secret,
        secret=True,
    )
    STATE_SECRETS: tuple[bytes, ...] = setting(
        (),
        ListOf(
            item=Secret(),
            indexed=True,
            what=(
                "a list of strings or bytes (E001), each at least 32 bytes (E004, "
                "naming `STATE_SECRETS[i]`)"
            ),
        ),
        (
            "Key rotation: the keys that seal request state, newest first. The "
            "first seals, every one opens (each AES key is derived from its secret "
            "with HKDF-SHA256). To rotate: put the new key first on every worker, "
            "then remove the old one once the state it sealed has expired "
            "(`STATE_TTL`). "
            "State sealed under a removed key is answered -32602 (start the request"
            " again)."
        ),
        checks="not with `STATE_SECRET` (E009)",
        engine="state_secrets",
        secret=True,
    )
    STATE_TTL: float = setting(
        600.0,
        Seconds(),
        (
            "Seconds a sealed `requestState` (a 2026-07-28 call waiting for the "
            "client's input) stays valid; a later answer is refused -32602 and "
            "the client starts the request again. Also how long a key removed "
            "from `STATE_SECRETS` must have been kept."
        ),
        engine="state_ttl",
    )
    BROKER: str | None = setting(
        None,
        Matching(
            optional=True,
            pattern=BROKER_URL,
            must="be None or a Redis URL (redis://, rediss:// or unix://) without "
            "spaces",
            example="redis://127.0.0.1:6379/0",
            what="a `redis://`, `rediss://` or `unix://` URL without spaces "
            "(E001/E004)",
        ),
        (
            "Where the 2025-revision sessions live. `None`: in this process (one "
            'worker). A Redis URL (`"redis://host:6379/0"`, `rediss://…`, '
            "`unix://…`): in Redis, so every worker on every host serves every "
            "session (see `docs/deployment.md` for what is shared and what is not "
            "yet). Needs `pip install wymcp-broker-redis`, which `wymcp.conf` "
            "imports by the URL's scheme. Stateless 2026-07-28 requests never "
            "touch it."
        ),
        checks=(
            "needs `STATE_SECRETS` or `STATE_SECRET` (E008) and the "
            "wymcp-broker-redis package (E010)"
        ),
        secret=True,
    )
    SESSION_IDLE_TIMEOUT: float = setting(
        1800.0,
        Seconds(),
        ("Seconds of idleness after which a 2025-revision session ends."),
        engine="session_idle_timeout",
    )
    MAX_SESSIONS: int = setting(
        10_000,
        Integer(low=1),
        (
            "The most sessions alive at once; an `initialize` beyond it is answered"
            " 503 with `Retry-After: {RETRY_AFTER}`. With `BROKER`, the most copies"
            " of the shared sessions one worker holds: past it the least recently"
            " used copy holding no stream, call or question is dropped (fetched"
            " again when used); `BROKER_MAX_SESSIONS` caps the sessions in Redis."
        ),
        engine="max_sessions",
    )
    BROKER_MAX_SESSIONS: int = setting(
        10_000,
        Integer(low=1),
        (
            "With `BROKER`: the most live sessions in Redis, all workers and"
            " clients together (each record ≤ ~41 KiB, ~0.7 KiB typical). One"
            " more `initialize` is answered 503 with a `Retry-After` of when the"
            " oldest session idles out. Apart from `MAX_SESSIONS`, which sizes"
            " one worker's memory (its copies), this sizes Redis's."
        ),
    )
    MAX_SESSIONS_PER_CLIENT: int = setting(
        1_000,
        Integer(low=1),
        (
            "With `BROKER`: the most live sessions one client may hold in Redis,"
            " all workers together: one principal with `AUTH`, else one peer"
            " address (IPv6 by its /64). One more `initialize` is answered 503"
            " with a `Retry-After` of when its oldest session idles out, while"
            " other clients still open theirs; `BROKER_MAX_SESSIONS` caps all"
            " clients' together. Behind a reverse proxy without `AUTH` every client has"
            " the proxy's address: raise it to `BROKER_MAX_SESSIONS` there."
        ),
    )
    MAX_STREAMS: int = setting(
        500,
        Integer(low=1),
        (
            "The most long-lived SSE streams open at once in one process: a "
            "session's GET stream and a `subscriptions/listen` stream each count "
            "while open. One more is answered 503 with `Retry-After: "
            "{RETRY_AFTER}` (and -32603"
            ' "too many open streams (MAX_STREAMS)") by the engine, before '
            "anything else of the request is checked; short requests are never "
            "refused by it. Keep it well below "
            "`MAX_CONNECTIONS`, so streams never take every connection."
        ),
        checks="not below `MAX_CONNECTIONS` warns (W012)",
        engine="max_streams",
    )
    MAX_STREAMS_PER_CLIENT: int = setting(
        50,
        Integer(low=1),
        (
            "The most long-lived streams one client may hold open at once: one "
            "principal (the token's subject) with `AUTH`, else one peer address. "
            "One more is answered 503 with `Retry-After: {RETRY_AFTER}` (and "
            '-32603 "this '
            'client has too many open streams (MAX_STREAMS_PER_CLIENT)"), while '
            "other clients still open theirs. Behind a reverse proxy without `AUTH`"
            " every client has the proxy's address: raise it to `MAX_STREAMS` "
            "there."
        ),
        engine="max_streams_per_client",
    )
    CLIENT_REQUEST_TIMEOUT: float = setting(
        60.0,
        Seconds(),
        (
            "Seconds a tool waits for the client's answer to a request the server "
            "sends it on a 2025-revision session (elicitation, sampling, roots); "
            "then the tool's `ctx` call raises and the tool decides what to do."
        ),
        engine="client_request_timeout",
    )
    CALL_TIMEOUT: float | None = setting(
        300.0,
        Seconds(optional=True),
        (
            "Seconds a tool call may run. A tool still running then is cancelled "
            'and the call answers `isError` with `{"errorType": "call_timeout", '
            '"tool", "action", "message": "The call did not finish within N seconds'
            ' (CALL_TIMEOUT) and was stopped. …"}`. A `TimeoutError` the tool '
            "raises itself stays `tool_raised`. `None`: no limit."
        ),
        engine="call_timeout",
    )
    RESULT_LIMIT: int = setting(
        16 * 1024 * 1024,
        Integer(low=1024),
        (
            "The most bytes a tool's result may take: its content blocks and "
            "structured content as JSON (strings counted as UTF-8 with their "
            "escapes). A larger result is not sent; the call answers `isError` with"
            ' `{"errorType": "result_too_large", "tool", "action", "limit", '
            '"message"}`. Bounds what one call can make the server hold for a '
            "client that reads slowly."
        ),
        engine="result_limit",
    )
    EXPOSE_EXCEPTION_MESSAGES: bool = setting(
        False,  # noqa: FBT003 - the default
        Boolean(),
        (
            "`False`: a tool that raises answers `tool_raised` with the exception's"
            " class and a short reference id; the server log (logger "
            "`wymcp.core.server`, level ERROR) holds that reference with the "
            "message and the traceback. `True` (development only): the answer "
            "carries the exception's message too, cut at 500 characters. Messages "
            "meant for the model go through `ToolError` either way."
        ),
        engine="expose_exception_messages",
    )
    TASK_TTL: float = setting(
        3600.0,
        Seconds(),
        (
            "Seconds a task (a tool call run as a task, see [tasks.md](tasks.md)) "
            "and its result are kept. Work still running then is stopped and the "
            "task ends `failed`; after it, `tasks/get` answers -32602. Tasks are "
            "not bound by `CALL_TIMEOUT`."
        ),
        engine="task_ttl",
    )
    TASK_POLL_INTERVAL: int = setting(
        1000,
        Integer(low=1, high=3_600_000),
        (
            "Milliseconds a client should wait between two `tasks/get` of one task "
            "(`pollIntervalMs`)."
        ),
        engine="task_poll_interval_ms",
    )
    MAX_TASKS: int = setting(
        1000,
        Integer(low=1),
        (
            "The most tasks running at once (over all workers with `BROKER`); one "
            "more `tools/call` that would create one answers 503 + `Retry-After`. "
            "Ended tasks do not count: `TASK_MEMORY_BUDGET` bounds them."
        ),
        engine="max_tasks",
    )
    MAX_TASKS_PER_PRINCIPAL: int = setting(
        100,
        Integer(low=1),
        (
            "The most tasks one caller runs at once: one principal (the token's "
            "subject) with `AUTH`, else one peer address. Ended tasks do not count."
            " Behind a reverse proxy without `AUTH` every client has the proxy's "
            "address: raise it towards `MAX_TASKS` there."
        ),
        engine="max_tasks_per_principal",
    )
    TASK_MEMORY_BUDGET: int = setting(
        256 * 1024 * 1024,
        Integer(low=64 * 1024),
        (
            "The most bytes the ended tasks kept until their `TASK_TTL` may take, "
            "in all (in this process's memory, or in Redis with `BROKER`): each is "
            "counted as its result's JSON text, its error and 2 KiB for its record. "
            "A task that ends when the total is full makes room by forgetting the "
            "oldest ended tasks (their `tasks/get` then answers -32602, as for an "
            "expired task). With `BROKER` it is never more than half of Redis's "
            "`maxmemory` (read at the first task; a warning says so), so results "
            "leave room for sessions."
        ),
        checks="too small for one result of `RESULT_LIMIT` warns (W016)",
        engine="task_memory_budget",
    )
    TASK_MEMORY_BUDGET_PER_PRINCIPAL: int = setting(
        32 * 1024 * 1024,
        Integer(low=64 * 1024),
        (
            "The most bytes one caller's ended tasks may take (counted as for "
            "`TASK_MEMORY_BUDGET`); its oldest ended tasks are forgotten first to "
            "make room. A result larger than it ends its task `failed` (-32603, "
            "\"The task's result takes N bytes, more than one caller's ended tasks"
            ' may keep").'
        ),
        checks="too small for one result of `RESULT_LIMIT` warns (W016)",
        engine="task_memory_budget_per_principal",
    )
    TASK_LEASE: float = setting(
        10.0,
        Seconds(least=0.5),
        (
            "With `BROKER`: seconds a running task's lease lives in Redis "
            "unrenewed; the worker running the task renews it every third of "
            "that. A task whose worker died or was restarted shows `failed` "
            '("The worker running the task stopped…") to the first `tasks/get` '
            "after its lease ran out (see [tasks.md](tasks.md))."
        ),
    )
    PAGE_SIZE: int = setting(
        100,
        Integer(low=1, high=10_000),
        ("Items per page of `tools/list` (cursor pagination)."),
        engine="page_size",
    )
    CACHE_TTL: int = setting(
        0,
        Integer(low=0, high=86_400_000, example=60_000),
        (
            "Milliseconds a 2026-07-28 client may reuse a list or read result "
            "(`ttlMs`). `0`: ask again every time. Raise it when tools, resources "
            "and prompts do not change while the server runs."
        ),
        engine="ttl_ms",
    )
    PUBLISH_SCHEMA: str = setting(
        "compact",
        Matching(
            pattern=re.compile("compact|full"),
            must='be "compact" or "full"',
            example="full",
            what='`"compact"` or `"full"` (E001/E004)',
        ),
        (
            'What `tools/list` publishes of a multi-action tool: `"compact"`, '
            "`action` and a `data` object whose description names each action's "
            'required fields (`help` has the rest); `"full"`, also each action\'s '
            "fields, as a root `oneOf` with one branch per action (`action` its "
            "`const`, `data` its closed schema). See [tools.md](tools.md)."
        ),
        engine="publish_schema",
    )
    TOOLS_LIST_BUDGET: int = setting(
        10_000,
        Integer(low=1),
        (
            "The estimated tokens (published bytes / 4) `tools/list` may take "
            "before `wymcp check` warns; `wymcp check` prints each tool's and "
            "action's share. 10,000 tokens is about 5% of a 200k context."
        ),
        checks="above it warns (W017)",
    )
    CACHE_SCOPE: str = setting(
        "public",
        Matching(
            pattern=re.compile("public|private"),
            must='be "public" or "private"',
            example="private",
            what='`"public"` or `"private"` (E001/E004)',
        ),
        (
            'Who may share a cached 2026-07-28 result (`cacheScope`): `"public"`, '
            'any client; `"private"`, only the client (the principal) that '
            'asked. Use `"private"` when what a client sees depends on who it is.'
        ),
        engine="cache_scope",
    )
    KEEPALIVE_INTERVAL: float = setting(
        15.0,
        Seconds(),
        (
            "Seconds between keep-alive comment lines (`: keepalive`) on an open "
            "SSE stream."
        ),
    )
    ACCESS_LOG: bool = setting(
        False,  # noqa: FBT003 - the default
        Boolean(),
        (
            "Whether the endpoint logs one access line per request (logger "
            "`wymcp.access`, level INFO; fields in `docs/operations.md`, format "
            "`LOG_FORMAT`). Off by default: at full load the log lines cost more "
            "than serving the calls (about 40% of throughput measured here)."
        ),
    )
    LIFESPAN: object | None = setting(
        None,
        Importable(accept=context_manager_factory, what="a callable", optional=True),
        (
            "An async context manager factory (or a dotted path to one) called as "
            "`LIFESPAN(settings)` when the server starts, in every worker and by "
            "every runner (`wymcp serve`, `GunicornWorker`, `setup(app)`, "
            "`create_app`, `wymcp stdio`, the testing client), and left when it "
            "stops, after the calls in flight; what it yields is `ctx.state` for "
            "every tool, resource and prompt (see `docs/context.md`). An "
            "`@asynccontextmanager` function or a plain `async def` generator both"
            " work. Its exit gets `SHUTDOWN_GRACE` seconds (then it is cancelled, "
            "logged and not waited for); an exit that raises is logged and the "
            "process exits 1."
        ),
    )
    MIDDLEWARE: tuple[object, ...] = setting(
        (),
        ListOf(
            item=middleware,
            what="a list or tuple (E001) of callables, classes or dotted paths "
            "importable (E003) to them",
        ),
        (
            "Middleware run around each request the engine serves, outermost "
            "first: each is called as `await mw(call, call_next)` with the "
            "request's `CallRecord` (method, revision, tool, action, principal, "
            "session) and returns `await call_next()`, or raises `CallRefused` "
            "(a tool refusal for `tools/call`, -32600 otherwise). A class is made "
            "with no arguments. See `docs/operations.md`."
        ),
        engine="middleware",
    )
    RATE_LIMITS: tuple[object, ...] = setting(
        (),
        ListOf(
            item=rate_rule,
            indexed=True,
            what="a list of rules (E001), each a dict of `method`, `tool`, "
            "`action`, `rate`, `burst`, `concurrency` (E012)",
        ),
        (
            "Rate and concurrency limits on `tools/call` and on requests, per "
            "principal (the token's subject, else the client address): every rule "
            "that matches applies. A rule is a dict: `tool` and `action` narrow it "
            '(none: every call), `rate` ("10/s", "600/min", "N/h", "N/day") with '
            "`burst` (calls at once after a quiet spell, default 1; GCRA), "
            "`concurrency` (calls running at once). A limited call is refused "
            "`rate_limited` with `retry_after_ms`; `help` is never counted. A rule "
            'with a `method` ("tasks/get", …, or "*") counts requests instead, '
            "`help` included, and refuses one before dispatch: HTTP 429, "
            "`Retry-After`, JSON-RPC -32600 `rate_limited`. Per process without "
            "`BROKER`, across every worker with it. Behind a reverse proxy "
            "without AUTH every client has the proxy's address: a rule is then "
            "one limit shared by every anonymous client (one client spending it "
            "refuses all), so set AUTH or limit per client at the proxy. See "
            "`docs/operations.md`."
        ),
        engine="rate_limits",
    )
    RATE_LIMIT_ON_REDIS_ERROR: str = setting(
        "open",
        Matching(
            pattern=_OPEN_CLOSED,
            must='be "open" or "closed"',
            example="open",
            what='`"open"` or `"closed"` (E001/E004)',
        ),
        (
            "What `RATE_LIMITS` do when `BROKER` is set and Redis fails a "
            'decision. `"open"` (the default): the call is decided by this '
            "worker's own limits, as without `BROKER` (each worker admits the "
            'rule\'s rate; logged once per outage). `"closed"`: the call is '
            "refused `rate_limited` (retry after 1 s)."
        ),
    )
    METRICS: bool = setting(
        False,  # noqa: FBT003 - the default
        Boolean(),
        (
            "Serve Prometheus metrics at `METRICS_PATH` (needs the `[metrics]` "
            "extra: `prometheus_client`). Off by default: the extra is optional "
            "and the endpoint is a surface an operator opens on purpose. With "
            "`PROMETHEUS_MULTIPROC_DIR` set, every worker's series are summed."
        ),
        checks="needs the prometheus_client package (E011)",
    )
    TRACING: bool = setting(
        False,  # noqa: FBT003 - the default
        Boolean(),
        (
            "Make an OpenTelemetry span of each request the engine serves, after "
            "the MCP semantic conventions, with child spans for the gates and the "
            "tool's code; the parent is the trace context in `params._meta`, else "
            "the HTTP `traceparent` header (needs the `[otel]` extra of "
            "wymcp-core-server: `opentelemetry-api`; wire an SDK and exporter "
            "yourself, see `docs/operations.md`). Off: OpenTelemetry is never "
            "imported and a request costs what it did."
        ),
        checks="needs the opentelemetry-api package (E013)",
        engine="tracing",
    )
    METRICS_PATH: str = setting(
        "/metrics",
        Matching(
            pattern=URL_PATH,
            must="be a URL path starting with '/', without a query, a fragment "
            "or spaces",
            example="/metrics",
            what="a string (E001) starting with `/`, without query, fragment or "
            "spaces (E004)",
        ),
        (
            "Where the metrics are served (same Host/Origin checks as `PATH`, no "
            "MCP token)."
        ),
        checks="with METRICS on, not `PATH`, `/healthz` or `/readyz` (E018)",
    )
    METRICS_TOKEN: bytes | None = setting(
        None,
        Secret(optional=True),
        (
            "A bearer token the scraper must send (`Authorization: Bearer ...`) "
            "to read `METRICS_PATH`. `None`: the metrics need no token."
        ),
        secret=True,
    )
    LOG_FORMAT: str = setting(
        "text",
        Matching(
            pattern=_LOG_FORMATS,
            must='be "text" or "json"',
            example="json",
            what='`"text"` or `"json"` (E001/E004)',
        ),
        (
            "How `wymcp serve` writes its log lines: `text` (one readable line) "
            "or `json` (one object per line). Request-controlled values are "
            "escaped in both; see `docs/operations.md`."
        ),
    )
    LOOP: str = setting(
        "asyncio",
        Matching(
            pattern=_LOOPS,
            must='be "asyncio" or "uvloop"',
            example="uvloop",
            what='`"asyncio"` or `"uvloop"` (E001/E004)',
        ),
        (
            "The event loop `wymcp serve`, `wymcp stdio` and `GunicornWorker` run: "
            "`asyncio` (the standard library's) or `uvloop` (needs the `[uvloop]` "
            "extra). `asyncio` by default: it needs no compiled extra and runs "
            "everywhere Python does, so a plain install serves as documented; "
            "`uvloop` is the faster choice where its wheel installs (see "
            "`docs/performance.md`)."
        ),
        checks="needs the uvloop package (E014)",
    )
    SHUTDOWN_GRACE: float = setting(
        10.0,
        Seconds(allow_zero=True),
        (
            "Seconds `wymcp serve` (and `GunicornWorker`) lets calls in flight "
            "finish after SIGINT/SIGTERM before cancelling them. Session streams "
            "close at once. `wymcp serve` exits at most 1 s after the grace "
            "(aiohttp may round a grace over 5 s up to the next second), whatever "
            "tools do: a call that ignores cancellation, or one waiting on a worker"
            " thread (`asyncio.to_thread`), is abandoned and logged, never waited "
            "for. `LIFESPAN`'s exit, after the calls, gets the same number of "
            "seconds of its own (within that bound for `wymcp serve`); `wymcp "
            "stdio` then gives what is still left 1 s more."
        ),
    )
    origins: tuple[tuple[str, str], ...] = ()
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
                        "Write AUTH_AUTHORIZATION_SERVERS = "
                        '["https://auth.example.com"].',
                    )
                ]
            )

    @property
    def explicit(self) -> frozenset[str]:
        """The names of the settings the user set (module, environment, override)."""
        return frozenset(name for name, _ in self.origins)

    def is_overridden(self, name: str) -> bool:
        """Whether the user set `name` (in the settings module or an override)."""
        return name in self.explicit

    def origin(self, name: str) -> str:
        """Where `name`'s value came from: default, module, environment or override."""
        return dict(self.origins).get(name, DEFAULT)

    def evolve(self, **overrides: object) -> Settings:
        """Return a copy with UPPERCASE `overrides` checked and applied.

        Raises `ImproperlyConfigured` naming every problem.
        """
        from wymcp.conf._loading import structure  # noqa: PLC0415 - a cycle

        converted, problems = structure(overrides)
        if problems:
            raise ImproperlyConfigured(problems)
        origins = dict(self.origins)
        for name in converted:
            if DECLARATIONS[name].is_set_by(overrides[name]):
                origins[name] = OVERRIDE
            else:
                origins.pop(name, None)
        return attrs.evolve(self, origins=tuple(origins.items()), **converted)


def _declarations() -> Mapping[str, Declaration]:
    found: dict[str, Declaration] = {}
    for field in attrs.fields(Settings):
        declared = field.metadata.get(_DECLARATION)
        if declared is not None:
            found[field.name] = attrs.evolve(declared, name=field.name)
    return found


DECLARATIONS: Final = _declarations()
"""Every setting's declaration, by name, in the order of the class."""

SETTING_NAMES: Final = tuple(sorted(DECLARATIONS))
"""Every setting wymcp knows, in alphabetical order."""
