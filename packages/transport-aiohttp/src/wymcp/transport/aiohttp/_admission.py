"""Which requests the endpoint reads: method, Host/Origin, token, type, size.

Every check here needs no body, so a refused request is answered at once (for
`Expect: 100-continue`, before the client sends its body): `Refused` carries
the answer. Nothing here reads the body or knows what the message means.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.hdrs import (
    CONTENT_ENCODING,
    CONTENT_LENGTH,
    CONTENT_TYPE,
    HOST,
    ORIGIN,
    TRANSFER_ENCODING,
)

from wymcp.conf import Settings
from wymcp.core.server import INVALID_REQUEST, BearerChallenge, Principal
from wymcp.transport.aiohttp._answers import error_response
from wymcp.transport.aiohttp._content_coding import body_codings
from wymcp.transport.aiohttp._host_policy import HostPolicy

if TYPE_CHECKING:
    from multidict import CIMultiDictProxy

    from wymcp.transport.aiohttp._bearer_auth import BearerAuth

ALLOW = "GET, POST, DELETE"
_JSON_TYPE = "application/json"
_UTF8 = frozenset({"utf-8", "utf8"})
_PLAIN_JSON = ["application/json"]
_CHUNKED = ["chunked"]
_PRINCIPAL_KEY = web.RequestKey("wymcp_principal", Principal)


class Refused(Exception):  # noqa: N818 - an answer, not a failure
    """A request answered before the engine sees it; `response` is the answer."""

    def __init__(self, response: web.Response) -> None:
        super().__init__(response.status)
        self.response = response


def too_large(limit: int) -> web.Response:
    """The 413 for a body over `BODY_LIMIT` (declared, sent, or inflated)."""
    return error_response(
        413,
        INVALID_REQUEST,
        f"Payload too large: the body exceeds BODY_LIMIT ({limit} bytes).",
        close=True,
    )


def _forbidden(why: str) -> Refused:
    """The 403 refusal of a request whose Host, target or Origin is not allowed."""
    return Refused(error_response(403, INVALID_REQUEST, f"Forbidden: {why}"))


class Admission:
    """The endpoint's admission policy, from the settings and the `AUTH` hook."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._policy = policy = HostPolicy.build(
            settings.ALLOWED_HOSTS, settings.ALLOWED_ORIGINS
        )
        # what `admit_anonymous` looks up first: the policy's own verdicts
        self._any_host = policy.any_host
        self._hosts_allowed = policy.hosts_seen.verdicts
        self._any_origin = policy.any_origin
        self._origins_allowed = policy.origins_seen.verdicts
        self._body_limit = settings.BODY_LIMIT
        self.auth: BearerAuth | None = None
        if settings.AUTH is not None:
            # Loaded only for AUTH: a server without it starts sooner.
            from wymcp.transport.aiohttp._bearer_auth import (  # noqa: PLC0415 - only with AUTH
                BearerAuth,
            )

            self.auth = BearerAuth(settings, settings.AUTH)

    async def admit(self, request: web.Request) -> Principal | None:
        """Run every check that needs no body; return the authenticated principal.

        The principal is kept on the request, so a request admitted by the
        `Expect: 100-continue` handler is not authenticated twice.
        """
        if self.auth is None:
            self._check_method(request)
            self.check_addressing(request)
            self._check_body_headers(request)
            return None
        if _PRINCIPAL_KEY in request:
            return request[_PRINCIPAL_KEY]
        self._check_method(request)
        self.check_addressing(request)
        outcome = await self.auth.authenticate(request)
        if isinstance(outcome, web.Response):
            raise Refused(outcome)
        principal = request[_PRINCIPAL_KEY] = outcome
        self._check_body_headers(request)
        return principal

    def admit_anonymous(
        self, request: web.Request, headers: CIMultiDictProxy[str]
    ) -> None:
        """`admit` without `AUTH`: the same checks, none of which awaits.

        `headers` is `request.headers`. What clients send (a POST of
        `application/json`, uncompressed, within `BODY_LIMIT`, to a path,
        with one Host and at most one Origin the policy already allowed) is
        admitted on a few lookups, each one call into the multidict's C;
        anything else goes through every check.
        """
        if request.method == "POST":
            hosts = headers.getall(HOST, None)
            origins = headers.getall(ORIGIN, None)
            declared = headers.getall(CONTENT_LENGTH, None)
            usual = (
                hosts is not None
                and len(hosts) == 1
                and (self._any_host or self._hosts_allowed.get(hosts[0], False))
                and (origins is None or self._known_origin(origins))
                and headers.getall(CONTENT_TYPE, None) == _PLAIN_JSON
                and CONTENT_ENCODING not in headers
                and headers.getall(TRANSFER_ENCODING, _CHUNKED) == _CHUNKED
                and request.raw_path.startswith("/")
                and (declared is None or int(declared[0]) <= self._body_limit)
            )
            if usual:
                return
        self._check_method(request)
        self.check_addressing(request)
        self._check_body_headers(request)

    def _known_origin(self, origins: list[str]) -> bool:
        """Whether `origins` is one Origin already allowed (False: not known yet)."""
        return len(origins) == 1 and (
            self._any_origin or self._origins_allowed.get(origins[0], False)
        )

    def check_addressing(self, request: web.Request) -> None:
        """Refuse (403) a Host or an Origin not allowed: what every route checks."""
        self.check_host(request)
        self._check_origin(request)

    def _check_body_headers(self, request: web.Request) -> None:
        _check_transfer_encoding(request)
        if request.method == "POST":
            self._check_content_type(request)
            self._check_content_encoding(request)
            declared = request.content_length
            if declared is not None and declared > self.settings.BODY_LIMIT:
                raise Refused(too_large(self.settings.BODY_LIMIT))

    def challenge(self, request: web.Request) -> BearerChallenge | None:
        """How the engine's refusals of `request` point at a token (None: no AUTH)."""
        return None if self.auth is None else self.auth.challenge(request)

    @staticmethod
    def _check_method(request: web.Request) -> None:
        if request.method not in {"GET", "POST", "DELETE"}:
            raise Refused(
                error_response(
                    405,
                    INVALID_REQUEST,
                    f"Method not allowed. This endpoint answers {ALLOW}.",
                    headers={"Allow": ALLOW},
                )
            )

    def check_host(self, request: web.Request) -> None:
        """Refuse (403) a Host, or an absolute request target, not allowed."""
        if not self._policy.host_allowed(request.headers.getall("Host", [])):
            raise _forbidden(
                "the Host header is not allowed. Add the host to ALLOWED_HOSTS."
            )
        target = request.raw_path
        if not target.startswith("/"):
            # The absolute form (`POST http://host/mcp`) names the host the
            # request is for, and a server must use it over Host (RFC 9112
            # section 3.2.2): it is checked the same way.
            authority = urlsplit(target).netloc
            if not authority or not self._policy.host_allowed([authority]):
                raise _forbidden(
                    "the request target names a host that is not allowed. Send "
                    "the path alone, or add the host to ALLOWED_HOSTS."
                )

    def _check_origin(self, request: web.Request) -> None:
        if not self._policy.origin_allowed(request.headers.getall("Origin", [])):
            raise _forbidden(
                "the Origin header is not allowed. Add the origin to ALLOWED_ORIGINS."
            )

    @staticmethod
    def _check_content_type(request: web.Request) -> None:
        values = request.headers.getall("Content-Type", [])
        if values == _PLAIN_JSON:  # what clients send: nothing more to parse
            return
        if len(values) != 1 or not is_utf8_json(values[0]):
            raise Refused(
                error_response(
                    415,
                    INVALID_REQUEST,
                    "Unsupported Media Type: send the JSON-RPC message with "
                    "Content-Type: application/json (UTF-8).",
                )
            )

    def _check_content_encoding(self, request: web.Request) -> None:
        """Refuse a body in a coding `ACCEPT_CONTENT_ENCODING` does not list.

        One coding at most: stacked codings multiply what a bomb inflates to.
        The connection closes, so nothing the client still sends is read.
        """
        values = request.headers.getall("Content-Encoding", ())
        if not values:  # what clients send: nothing to parse
            return
        codings = body_codings(values)
        accepted = self.settings.ACCEPT_CONTENT_ENCODING
        if not codings or (len(codings) == 1 and codings[0] in accepted):
            return
        listed = " or ".join(accepted)
        raise Refused(
            error_response(
                415,
                INVALID_REQUEST,
                "Unsupported Media Type: send the body uncompressed"
                + (f", or in one coding: {listed}." if listed else ".")
                + " See ACCEPT_CONTENT_ENCODING.",
                close=True,
            )
        )


def _check_transfer_encoding(request: web.Request) -> None:
    """Refuse (501) a body in a transfer coding other than `chunked` alone.

    aiohttp reads `gzip, chunked` as chunked and hands the body over still
    compressed: the coding would be ignored. RFC 9112 section 6.1 answers an
    unknown or unsupported transfer coding 501; the connection closes, so the
    body is not read.
    """
    values = request.headers.getall("Transfer-Encoding", ())
    if not values:  # what clients send
        return
    codings = [
        coding.strip().lower() for value in values for coding in value.split(",")
    ]
    if [coding for coding in codings if coding] == _CHUNKED:
        return
    raise Refused(
        error_response(
            501,
            INVALID_REQUEST,
            "Not implemented: the only transfer coding understood is chunked. "
            "Send the body with Transfer-Encoding: chunked alone, or with "
            "Content-Length (compress it with Content-Encoding, if allowed).",
            close=True,
        )
    )


def is_utf8_json(value: str) -> bool:
    """Whether a Content-Type value is JSON in UTF-8: one pass, no backtracking.

    `application/json` with any parameters, of which `charset` (quoted or
    not) must name UTF-8. aiohttp's own parser (the email package's) is
    quadratic in the number of `;` and recurses on nested comments.
    """
    mime, _, parameters = value.partition(";")
    if mime.strip().lower() != _JSON_TYPE:
        return False
    for parameter in parameters.split(";"):
        name, _, given = parameter.partition("=")
        if name.strip().lower() == "charset":
            charset = given.strip().removeprefix('"').removesuffix('"')
            if charset.lower() not in _UTF8:
                return False
    return True
