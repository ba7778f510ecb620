"""What a transport and the engine exchange for one HTTP request.

The transport owns bytes: it bounds and parses the body, checks Origin/Host
and hands the engine an `Exchange`. The engine answers with a `Reply`, or
first writes messages to the call's `Stream`, which turns the HTTP response
into an SSE stream. Nothing here performs I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar, overload

import attrs

if TYPE_CHECKING:
    from wymcp.core.server._challenge import BearerChallenge
    from wymcp.core.server._middleware import CallRecord

JSONValue = Any
"""A decoded JSON value (the decode boundary is the only place Any appears)."""


# `Headers`, `Exchange` and `Reply` (and `Incoming`) are made for every request
# and never changed afterwards. They are not frozen: a frozen attrs class sets
# each field through `object.__setattr__`, which cost 3% of a tool call.

_T = TypeVar("_T")

HeaderIndex = Mapping[str, list[str]]
"""Header values by lower-case name, in arrival order (`Headers.index`)."""


class CaseInsensitiveHeaders(Protocol):
    """What `HeaderView` reads: a multidict whose names match in any case.

    aiohttp's `request.headers` (a `CIMultiDictProxy`) is one from multidict
    7 on, whose `keys()` holds each name once (the first spelling sent): its
    names are HTTP tokens, matched as `str.lower` folds them.
    """

    @overload
    def getall(self, key: str, /) -> list[str]: ...
    @overload
    def getall(self, key: str, default: _T, /) -> list[str] | _T: ...
    def getall(self, key: str, default: object = None, /) -> object:
        """Every value under `key` in arrival order; `default` when none."""
        ...

    def __contains__(self, key: object, /) -> bool:
        """Whether `key` came at all."""
        ...

    def __len__(self) -> int:
        """How many header lines came (a repeated name counts each time)."""
        ...

    def keys(self) -> Collection[str]:
        """Each name once, as first sent (its `len` counts names, not lines)."""
        ...


class HeaderView(Mapping[str, list[str]]):
    """A `HeaderIndex` read straight off a case-insensitive multidict.

    What `Headers.of` builds, without copying: each lookup asks the multidict
    (in C for aiohttp's), and returns a new list of the values sent under the
    name, in arrival order. Iterating yields each name once, lower-cased, in
    the order names first came. Nothing is kept but the multidict itself.
    """

    __slots__ = ("_headers",)

    def __init__(self, headers: CaseInsensitiveHeaders) -> None:
        self._headers = headers

    def __getitem__(self, name: str) -> list[str]:
        """Every value sent under `name`; KeyError when none came."""
        return self._headers.getall(name)

    def get(self, name: str, default: Any = None) -> Any:
        """Every value sent under `name`, or `default` (one call, not two)."""
        return self._headers.getall(name, default)

    def __contains__(self, name: object) -> bool:
        """Whether `name` came (in any case)."""
        return name in self._headers

    def __bool__(self) -> bool:
        """Whether any header came."""
        return len(self._headers) > 0

    def __iter__(self) -> Iterator[str]:
        """Each name once, lower-cased, in the order names first came."""
        return (name.lower() for name in self._headers.keys())  # noqa: SIM118 - once each

    def __len__(self) -> int:
        """How many distinct names came."""
        return len(self._headers.keys())

    @property
    def repeated(self) -> bool:
        """Whether any name came more than once: two lengths, no loop."""
        headers = self._headers
        return len(headers) != len(headers.keys())


def _repeated(index: HeaderIndex) -> bool:
    if isinstance(index, HeaderView):
        return index.repeated
    return any(len(values) > 1 for values in index.values())


@attrs.define
class Headers:
    """Request headers: names compared case-insensitively, duplicates kept.

    `index` maps each lower-case name to its values in arrival order; it is
    made once per request and read, never changed: a dict (`Headers.of`), or
    a `HeaderView` over the transport's own multidict (`Headers.view`).
    `repeated` says whether any name came more than once (rare: then a value
    list holds several); it is worked out when first asked unless given.
    """

    index: HeaderIndex
    _repeated: bool | None = None

    @property
    def repeated(self) -> bool:
        """Whether any name came more than once."""
        repeated = self._repeated
        if repeated is None:
            repeated = self._repeated = _repeated(self.index)
        return repeated

    @classmethod
    def view(cls, headers: CaseInsensitiveHeaders) -> Headers:
        """Read `headers` (aiohttp's `request.headers`) in place, not copied.

        Only for a multidict whose `keys()` holds each name once (multidict 7
        on): an older one lists every spelling sent, and the view would then
        miss a repeated name. The HTTP transport's `request_headers` checks
        which it has and copies (`of`) otherwise.
        """
        return cls(HeaderView(headers))

    @classmethod
    def of(cls, items: Iterable[tuple[str, str]]) -> Headers:
        """Build from (name, value) pairs in arrival order."""
        try:
            count = len(items)  # type: ignore[arg-type]
        except TypeError:  # an iterator: kept, to be counted and read again
            items = tuple(items)
            count = len(items)
        # Names rarely repeat: one pass keeps the last value of each, and only
        # when a name came twice is the index built again, keeping them all.
        index: dict[str, list[str]] = {}
        for name, value in items:  # a loop: a comprehension is one more call
            index[name.lower()] = [value]
        if len(index) == count:
            return cls(index, False)  # noqa: FBT003 - repeated (a keyword costs a dict)
        index = {}
        for name, value in items:
            key = name.lower()
            values = index.get(key)
            if values is None:
                index[key] = [value]
            else:
                values.append(value)
        return cls(index, True)  # noqa: FBT003 - repeated

    def getall(self, name: str) -> list[str]:
        """Return every value sent under `name`, in order (empty if none)."""
        return list(self.index.get(name.lower(), ()))

    def get(self, name: str) -> str | None:
        """Return the first value sent under `name`, or None."""
        values = self.index.get(name.lower())
        return values[0] if values else None


_NO_HEADERS: Final[Mapping[str, str]] = MappingProxyType({})
"""A reply's headers when it adds none (shared: one dict less per reply)."""


@attrs.define
class Exchange:
    """One HTTP request as the engine sees it.

    `body` is the parsed JSON body of a POST (None for GET and DELETE): the
    transport has already answered an oversized, malformed or non-JSON body.
    `principal` is what the transport's auth hook accepted, or None.
    `mirrored_headers` is False for a transport without HTTP headers (stdio):
    the 2026-07-28 checks of `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` then
    do not apply. `challenge` is how a refusal of this request points at a
    token (None without authentication): the engine answers a tool call the
    principal lacks scopes for, or a stream its token outlived, with it.
    `peer` is the client's network address if the transport knows one: a
    client without a principal is counted by it (`max_streams_per_client`).
    `record`, when the transport observes requests (metrics, access log), is
    filled by the engine with the request's method, tool and outcome.
    `json_bytes` is the length of the JSON text `body` was decoded from, when
    the transport knows it: the gates need not count the values of data that
    came from a small text (`check_fast`'s `json_bytes`).
    """

    method: str
    headers: Headers
    body: JSONValue = None
    principal: object | None = None
    mirrored_headers: bool = True
    challenge: BearerChallenge | None = None
    peer: str | None = None
    record: CallRecord | None = None
    json_bytes: int | None = None


@attrs.define
class Reply:
    """The engine's answer: an HTTP status, a JSON body or none, extra headers.

    When the engine opened the call's stream, the transport sends `body` as
    the last SSE event instead (a None body sends nothing more) and ignores
    `status`. A body may hold an `EncodedJSON` (a task's kept result): write
    it with `encode_json`, which copies those bytes as they are.
    """

    status: int
    body: JSONValue = None
    headers: Mapping[str, str] = _NO_HEADERS


class Stream(Protocol):
    """The response stream of one HTTP request, provided by the transport.

    The first `open` (or `send`) commits a `200 text/event-stream` response
    with the given headers; later calls to `open` do nothing.
    """

    @property
    def opened(self) -> bool:
        """Whether the SSE response has been committed."""
        ...

    async def open(self, headers: Mapping[str, str] | None = None) -> None:
        """Commit the SSE response with extra headers (e.g. Mcp-Session-Id)."""
        ...

    async def send(
        self, message: JSONValue | None, *, event_id: str | None = None
    ) -> None:
        """Write one SSE event: `message` as JSON data (None: empty data)."""
        ...
