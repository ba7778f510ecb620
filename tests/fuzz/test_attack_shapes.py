"""Fuzz the attack shapes of issue 12: each gets a bounded answer, none holds the loop.

Deep-string bodies, capability bombs, compressed bodies (gzip bombs, invalid
gzip and deflate, br, zstd) and near-miss URIs against `{+a}/{+b}` and
`{.a}{.b}{.c}` templates. Properties: no 5xx, no -32603, no traceback, a
bounded answer, and the server's loop never blocked past the watchdog's bound
(`Client.assert_healthy`). Unread streams and slow readers need time, not
examples: they are in the soak (`scripts/soak.py`). No shrinking: an example
that holds the loop is slow, and its size is the point.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from typing import TYPE_CHECKING, Any

from hypothesis import Phase, given, settings
from hypothesis import strategies as st

if TYPE_CHECKING:
    from conftest import Answer, Client

FUZZ = settings(
    settings.get_profile(os.environ.get("WYMCP_FUZZ_PROFILE", "wymcp-fuzz")),
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
)
MODERN = "2026-07-28"
SESSION_REVISION = "2025-11-25"
BODY_LIMIT = 4 * 1024 * 1024
"""The fuzzed server's BODY_LIMIT (the default)."""
SMALL = 4096
"""Bytes a refusal may take, whatever was sent."""


def headers(method: str, name: str | None = None) -> dict[str, str]:
    """The mirrored headers of a 2026-07-28 request."""
    sent = {
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if name is not None:
        sent["Mcp-Name"] = name
    return sent


def body(method: str, params: dict[str, Any] | None = None) -> bytes:
    """A 2026-07-28 request body."""
    sent = dict(params or {})
    sent["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": sent}
    return json.dumps(message).encode()


def end_session(client: Client, session: str) -> None:
    """DELETE a session: examples must not pile sessions up."""
    delete = (
        f"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{client.port}\r\n"
        f"MCP-Protocol-Version: {SESSION_REVISION}\r\n"
        f"Mcp-Session-Id: {session}\r\nContent-Length: 0\r\n\r\n"
    )
    assert client.send(delete.encode()).status == 200


def assert_bounded(answer: Answer) -> None:
    """No 5xx, no traceback, no internal error, a small answer."""
    assert answer.status < 500, answer
    assert b"Traceback" not in answer.body
    assert len(answer.body) <= SMALL, len(answer.body)
    if answer.headers.get("content-type", "").startswith("application/json"):
        payload = json.loads(answer.body)
        assert payload.get("error", {}).get("code") != -32603, payload


def assert_json_refusal(answer: Answer) -> None:
    """A bounded JSON 4xx (never aiohttp's plain text, never a 200)."""
    assert_bounded(answer)
    assert 400 <= answer.status < 500, answer
    assert answer.headers.get("content-type", "").startswith("application/json")
    assert "error" in json.loads(answer.body)


@FUZZ
@given(
    depth=st.integers(min_value=101, max_value=160),
    escapes=st.integers(min_value=0, max_value=12_000)
    | st.sampled_from([4_000, 8_000, 12_000]),
    closed=st.booleans(),
)
def test_deep_string_bodies(
    client: Client, depth: int, escapes: int, closed: bool
) -> None:
    sent = b"[" * depth + b'"' + b'\\"' * escapes
    if closed:
        sent += b'"' + b"]" * depth
    answer = client.post(sent, headers("tools/list"))
    assert_json_refusal(answer)
    client.assert_healthy()


@FUZZ
@given(
    items=st.integers(min_value=0, max_value=6_000) | st.sampled_from([2_700, 6_000]),
    nested=st.integers(min_value=1, max_value=3),
)
def test_capability_bombs(client: Client, items: int, nested: int) -> None:
    value: Any = []
    for _ in range(nested):
        value = [value]
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": SESSION_REVISION,
            "capabilities": {"experimental": {"bomb": [value] * items}},
            "clientInfo": {"name": "bomb", "version": "0"},
        },
    }
    answer = client.post(
        json.dumps(init).encode(), {"Content-Type": "application/json"}
    )
    assert_bounded(answer)
    assert answer.status in {200, 400, 503}, answer
    session = answer.headers.get("mcp-session-id")
    if session is not None:
        end_session(client, session)
    client.assert_healthy()


def _bomb(size: int) -> bytes:
    return gzip.compress(b" " * size, compresslevel=9)


COMPRESSED = st.one_of(
    st.tuples(
        st.just("gzip"), st.builds(_bomb, st.sampled_from([BODY_LIMIT + 1, 2**25]))
    ),
    st.tuples(
        st.sampled_from(["gzip", "deflate", "br", "zstd"]), st.binary(max_size=64)
    ),
    st.tuples(
        st.sampled_from(["gzip", "deflate"]),
        st.builds(
            lambda raw: zlib.compress(raw)[:-4], st.binary(min_size=8, max_size=64)
        ),
    ),
    st.tuples(
        st.sampled_from(["br", "zstd", "x-unknown"]), st.just(body("tools/list"))
    ),
)


@FUZZ
@given(shape=COMPRESSED)
def test_compressed_bodies(client: Client, shape: tuple[str, bytes]) -> None:
    encoding, sent = shape
    answer = client.post(sent, {**headers("tools/list"), "Content-Encoding": encoding})
    assert_json_refusal(answer)
    client.assert_healthy()


@FUZZ
@given(valid=st.just(body("tools/list")), encoding=st.sampled_from(["gzip", "deflate"]))
def test_a_valid_compressed_body_is_served_or_refused_cleanly(
    client: Client, valid: bytes, encoding: str
) -> None:
    sent = gzip.compress(valid) if encoding == "gzip" else zlib.compress(valid)
    answer = client.post(sent, {**headers("tools/list"), "Content-Encoding": encoding})
    assert_bounded(answer)
    assert answer.status in {200, 400, 415}, answer
    client.assert_healthy()


NEAR_MISSES = st.one_of(
    st.tuples(
        st.just("file:///"),
        st.sampled_from(["a/", "/", "a"]),
        st.integers(min_value=0, max_value=4_000) | st.just(4_000),
        st.sampled_from(["x", "/en", "/end/", ""]),
    ),
    st.tuples(
        st.just("file:///x"),
        st.sampled_from([".", "a.", ".."]),
        st.integers(min_value=0, max_value=600) | st.just(600),
        st.sampled_from(["x", "", "/x"]),
    ),
)


@FUZZ
@given(near=NEAR_MISSES)
def test_near_miss_uris(client: Client, near: tuple[str, str, int, str]) -> None:
    prefix, unit, count, tail = near
    uri = prefix + unit * count + tail
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": SESSION_REVISION,
            "capabilities": {},
            "clientInfo": {"name": "near", "version": "0"},
        },
    }
    opened = client.post(
        json.dumps(init).encode(), {"Content-Type": "application/json"}
    )
    session = {
        "Content-Type": "application/json",
        "MCP-Protocol-Version": SESSION_REVISION,
        "Mcp-Session-Id": opened.headers["mcp-session-id"],
    }
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert client.post(json.dumps(done).encode(), session).status == 202
    read = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "resources/read",
        "params": {"uri": uri},
    }
    answer = client.post(json.dumps(read).encode(), session)
    assert_bounded(answer)
    end_session(client, session["Mcp-Session-Id"])
    client.assert_healthy()
