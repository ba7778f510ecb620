"""Default wymcp settings, in one readable place.

A settings module (named by ``--settings`` or ``WYMCP_SETTINGS_MODULE``)
overrides any of these by assigning the same UPPERCASE name. Every value here
is immutable; ``docs/settings.md`` explains each one and the checks it meets.
"""

# The tools to serve: dotted paths ("myapp.tools.Tasks"), Tool subclasses or
# Tool instances. The built-in `help` tool is always added.
TOOLS: tuple[object, ...] = ()

# Resources and prompts to serve: dotted paths or objects, as for TOOLS.
RESOURCES: tuple[object, ...] = ()
PROMPTS: tuple[object, ...] = ()

# The largest request body accepted, in bytes (4 MiB). A larger body is
# answered 413 and never read past this many bytes.
BODY_LIMIT: int = 4 * 1024 * 1024

# The most bytes of large request bodies (over 4 KiB each) the process holds at
# once while they are read, decoded and served (4 MiB: one body at
# BODY_LIMIT, or many smaller); a body that would pass it is answered 503 +
# Retry-After. Decoded, a body costs up to ~38 times its bytes (4 MiB of
# `[[[[]]]]` items: ~150 MiB), so this bounds their memory, and the time a
# garbage collection spends walking them (docs/security.md). None: no budget.
BODY_MEMORY_BUDGET: int | None = 4 * 1024 * 1024

# Seconds a client may take to send the whole body before it is answered 408.
BODY_TIMEOUT: float = 30.0

# Seconds a connection may take to send a request's line and headers, counted
# from when it opens or its previous response ends (so it is also how long an
# idle kept-alive connection stays open). Applied by `wymcp serve` and
# `GunicornWorker`; a connection that runs out is closed. Keep it above the
# idle timeout of a reverse proxy's upstream connections (nginx, load
# balancers: 60 s), or the proxy may reuse a connection just as it closes.
HEADER_TIMEOUT: float = 75.0

# The most connections `wymcp serve` (and `GunicornWorker`, per worker) keeps
# open at once; one more is answered 503 + Retry-After and closed.
MAX_CONNECTIONS: int = 1000

# Seconds a connection may go without its client taking any of the answer
# waiting to be written (an unread JSON answer or SSE stream); then it is
# closed and what it held is freed. Applied by `wymcp serve` and
# `GunicornWorker`.
WRITE_TIMEOUT: float = 30.0

# Content codings a POST body may carry: () refuses every one but identity
# (415); ("gzip", "deflate") inflates them, never past BODY_LIMIT.
ACCEPT_CONTENT_ENCODING: tuple[str, ...] = ()

# The deepest nesting of arrays and objects a request body may have.
JSON_DEPTH_LIMIT: int = 100

# True refuses unknown keys in a tool call; False drops them and lists what
# was dropped in the result's `_meta` (never silently).
STRICT: bool = True

# Where `wymcp serve` listens, and the endpoint's path.
HOST: str = "127.0.0.1"
PORT: int = 8000
PATH: str = "/mcp"

# Extra Host header values and Origin values the endpoint accepts. The
# loopback names (127.0.0.1, localhost, [::1], any port) are always accepted.
# Entries: "host", "host:port", "host:*" / "scheme://host[:port|:*]", or "*".
ALLOWED_HOSTS: tuple[str, ...] = ()
ALLOWED_ORIGINS: tuple[str, ...] = ()

# OAuth 2.1 resource-server mode (docs/authorization.md). AUTH names a token
# validator: an object with `async validate(token) -> Principal`, a class
# making one with no arguments, an (async) callable, or a dotted path to one.
# None serves without authentication.
AUTH: object | None = None

# The authorization servers (issuer URLs) published in the protected-resource
# metadata; at least one is needed when AUTH is set.
AUTH_AUTHORIZATION_SERVERS: tuple[str, ...] = ()

# This server's resource identifier (RFC 8707/9728), e.g.
# "https://mcp.example.com/mcp". None: derived from each request's Host and PATH.
AUTH_RESOURCE: str | None = None

# The scopes published as `scopes_supported`; empty: every scope that
# AUTH_REQUIRED_SCOPES and the tools declare.
AUTH_SCOPES_SUPPORTED: tuple[str, ...] = ()

# Scopes every request needs, whatever it asks for.
AUTH_REQUIRED_SCOPES: tuple[str, ...] = ()

# What the server calls itself in `initialize` and `server/discover`.
SERVER_NAME: str = "wymcp"
SERVER_VERSION: str = "0.1.0"

# Free text a client may show its model on connecting; None sends none.
INSTRUCTIONS: str | None = None

# The MCP revisions served, newest first.
PROTOCOL_VERSIONS: tuple[str, ...] = (
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
)

# The key that seals request state handed to clients (at least 32 bytes).
# None: a random key made when the settings are loaded, so it differs per
# process; set it when more than one worker serves the same clients.
STATE_SECRET: str | bytes | None = None

# Key rotation: the keys that seal request state, newest first (each at least
# 32 bytes). The first seals, every one opens; put a new key first and remove
# an old one once the state it sealed has expired. Replaces STATE_SECRET.
STATE_SECRETS: tuple[str | bytes, ...] = ()

# The broker every worker shares: None (sessions live in this process) or a
# Redis URL ("redis://host:6379/0"), which shares the 2025 sessions.
BROKER: str | None = None

# Sessions of the 2025 revisions: seconds of idleness before a session ends,
# and the most sessions alive at once (more are answered 503 + Retry-After).
SESSION_IDLE_TIMEOUT: float = 1800.0
MAX_SESSIONS: int = 10_000

# The most long-lived SSE streams open at once (GET streams and
# subscriptions/listen); one more is answered 503 + Retry-After. Kept well
# below MAX_CONNECTIONS, so streams never take every connection.
MAX_STREAMS: int = 500

# The most long-lived streams one client may hold open: one principal with
# AUTH, else one peer address (behind a proxy without AUTH, every client is
# the proxy: raise it to MAX_STREAMS there).
MAX_STREAMS_PER_CLIENT: int = 50

# Seconds a tool call may run; then it is stopped and answered isError.
# None lets calls run for as long as they take.
CALL_TIMEOUT: float | None = 300.0

# The most bytes a tool's result may take (its content and structured content
# as JSON, 16 MiB); a larger one answers isError `result_too_large` instead.
RESULT_LIMIT: int = 16 * 1024 * 1024

# True sends a raising tool's exception message to the client (development
# only: messages can carry secrets). False sends its class and a reference id
# that the server log holds with the traceback.
EXPOSE_EXCEPTION_MESSAGES: bool = False
# Seconds a task (a tool call the client polls, SEP-2663) and its result are
# kept; work still running then is stopped and the task ends failed. Tasks
# are not bound by CALL_TIMEOUT.
TASK_TTL: float = 3600.0

# Milliseconds a client should wait between two tasks/get of one task.
TASK_POLL_INTERVAL: int = 1000

# The most tasks kept at once (finished ones count until their TTL passes).
MAX_TASKS: int = 1000

# The most tasks one principal (or, without AUTH, every client) keeps at once.
MAX_TASKS_PER_PRINCIPAL: int = 100

# With BROKER: seconds a running task's lease lives in Redis unrenewed (its
# worker renews it every third of that). A task whose worker died shows
# `failed` to the first tasks/get after its lease ran out.
TASK_LEASE: float = 10.0

# How many items one page of tools/list (and other lists) holds.
PAGE_SIZE: int = 100

# Seconds between keep-alive comment lines on an open SSE stream.
KEEPALIVE_INTERVAL: float = 15.0

# Whether `wymcp serve` logs one line per request (logger "aiohttp.access").
# Off by default: at full load the lines cost more than serving the calls.
ACCESS_LOG: bool = False

# Seconds `wymcp serve` lets calls in flight finish after SIGINT/SIGTERM.
SHUTDOWN_GRACE: float = 10.0

# An async context manager factory, or a dotted path to one: called as
# `LIFESPAN(settings)` when the server starts in each worker and left when it
# stops; what it yields is `ctx.state` in every tool, resource and prompt (a
# database pool, a client shared by every call). None: `ctx.state` is None.
LIFESPAN: object | None = None
