"""The `Revision` table: what each revision serves; the one method table."""

from __future__ import annotations

import pytest

from wymcp.core.server import LEGACY, MODERN, SUPPORTED, Engine
from wymcp.core.server._jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError
from wymcp.core.server._revision import REVISIONS, SESSIONS, STATELESS, revision

SESSION_ONLY = {
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
}
STATELESS_ONLY = {"server/discover", "subscriptions/listen", "tasks/get"}


def test_every_supported_version_has_a_revision_and_only_2026_is_stateless():
    assert set(REVISIONS) == set(SUPPORTED)
    assert [v for v in SUPPORTED if revision(v).stateless] == [MODERN]
    assert revision(MODERN) is STATELESS
    assert SESSIONS.name == LEGACY[0]


def test_titles_and_the_version_header_check_start_at_2025_06_18():
    assert {v for v in SUPPORTED if not revision(v).titles} == {LEGACY[-1]}
    assert {v for v in SUPPORTED if not revision(v).checks_version_header} == {
        LEGACY[-1]
    }


def test_each_era_serves_its_own_methods():
    assert not SESSION_ONLY & STATELESS.methods
    assert STATELESS.methods >= STATELESS_ONLY
    for version in LEGACY:
        assert revision(version).methods >= SESSION_ONLY
        assert not STATELESS_ONLY & revision(version).methods
        assert "initialize" not in revision(version).methods  # the path answers it


def test_the_one_method_table_serves_exactly_the_methods_revisions_name():
    engine = Engine(tools=())
    named = set().union(*(r.methods for r in REVISIONS.values()))
    assert set(engine._methods) == named


@pytest.mark.parametrize(
    ("code", "stateless", "session"),
    [
        (-32700, 400, 400),
        (-32600, 400, 400),
        (-32602, 400, 200),
        (-32601, 404, 200),
        (-32020, 400, 200),
        (-32603, 200, 200),
    ],
)
def test_an_error_code_gets_its_revision_status(code, stateless, session):
    error = RpcError(code, "x")
    assert STATELESS.reply(1, error).status == stateless
    assert SESSIONS.reply(1, error).status == session
    forced = RpcError(code, "x", status=503, headers={"Retry-After": "5"})
    assert STATELESS.reply(1, forced).status == 503
    assert SESSIONS.reply(1, forced).headers == {"Retry-After": "5"}


def test_not_found_answers_differ_by_era():
    assert STATELESS.resource_not_found("u").code == INVALID_PARAMS
    assert SESSIONS.resource_not_found("u" * 500).data == {"uri": "u" * 120 + "…"}
    assert SESSIONS.resource_not_found("u").code == RESOURCE_NOT_FOUND
    assert "2026-07-28" in str(STATELESS.method_not_found().data)
    assert SESSIONS.method_not_found().data == {
        "reason": "This server has no such method."
    }


def test_structured_content_and_output_schemas_by_revision():
    array = {"type": "array"}
    assert STATELESS.publishes_output_schema(array)
    assert STATELESS.carries_structured([1])
    assert not SESSIONS.publishes_output_schema(array)
    assert SESSIONS.publishes_output_schema({"type": "object"})
    assert not SESSIONS.carries_structured([1])
    assert SESSIONS.carries_structured({})
    oldest = revision(LEGACY[-1])
    assert not oldest.publishes_output_schema({"type": "object"})
    assert not oldest.carries_structured({})


def test_finish_places_server_info_only_when_stateless():
    info = {"name": "wymcp"}
    assert SESSIONS.finish({"a": 1}, None) == {"a": 1}
    finished = STATELESS.finish({"a": 1, "_meta": {"k": 2}}, info)
    assert finished == {
        "a": 1,
        "resultType": "complete",
        "_meta": {"k": 2, "io.modelcontextprotocol/serverInfo": info},
    }
    assert STATELESS.finish({"resultType": "input_required"}, info)["resultType"] == (
        "input_required"
    )


@pytest.mark.parametrize(
    ("present", "named"),
    [
        ((), "protocolVersion"),
        (("capabilities",), "protocolVersion"),
        (("version",), "clientCapabilities"),
    ],
)
def test_a_stateless_request_missing_a_meta_field_is_told_the_first_one(
    present: tuple[str, ...], named: str
) -> None:
    from wymcp.core.server import Exchange, Headers
    from wymcp.core.server._jsonrpc import classify
    from wymcp.core.server._revision import META_CAPABILITIES, META_VERSION
    from wymcp.core.server._stateless_ladder import open_stateless

    meta: dict[str, object] = {"other": 1}
    if "version" in present:
        meta[META_VERSION] = MODERN
    if "capabilities" in present:
        meta[META_CAPABILITIES] = {}
    incoming = classify(
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": meta}}
    )
    exchange = Exchange("POST", Headers.of([]), None, mirrored_headers=False)
    with pytest.raises(RpcError) as caught:
        open_stateless(incoming, exchange, None, SUPPORTED)  # type: ignore[arg-type]
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.message == "Invalid params"
    assert caught.value.data == {
        "reason": f"params._meta must carry 'io.modelcontextprotocol/{named}'."
    }
