"""The HTTP transport's checks (`CHECKS`): ids, texts, and who runs them."""

from __future__ import annotations

import io

from wymcp.cli import _main
from wymcp.conf import Settings, run_checks
from wymcp.transport.aiohttp import CHECKS


def ids(settings: Settings) -> list[str]:
    return [problem.id for problem in run_checks(settings, checks=CHECKS)]


async def _validator(token: str) -> object:
    return token


def test_conf_alone_runs_none_of_the_http_checks():
    remote = Settings().evolve(HOST="192.0.2.1", ALLOWED_HOSTS=["*"])
    assert [p.id for p in run_checks(remote)] == ["wymcp.W002", "wymcp.W005"]
    assert ids(remote) == ["wymcp.W002", "wymcp.W004", "wymcp.W005"]


def test_wymcp_check_runs_the_installed_transports_checks(tmp_path, monkeypatch):
    (tmp_path / "remote_settings.py").write_text(
        'HOST = "192.0.2.1"\nSTATE_SECRET = "k" * 32\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("WYMCP_HOST", raising=False)
    out, err = io.StringIO(), io.StringIO()
    assert _main.check("remote_settings", out, err) == 0, err.getvalue()
    assert "wymcp.W003 (warning): HOST '192.0.2.1' is not a loopback" in out.getvalue()


def test_a_check_handed_in_runs_and_is_sorted_with_the_others():
    from wymcp.conf import CheckMessage

    def mine(settings, serving):
        return [CheckMessage("error", "myapp.E001", "no", "fix")]

    problems = run_checks(Settings(), checks=(mine,))
    assert [p.id for p in problems] == ["myapp.E001", "wymcp.W002", "wymcp.W005"]


def test_a_remote_host_without_allowed_hosts_warns():
    assert "wymcp.W003" in ids(Settings().evolve(HOST="192.0.2.1"))
    assert "wymcp.W003" not in ids(Settings().evolve(HOST="::1"))
    assert "wymcp.W003" not in ids(
        Settings().evolve(HOST="192.0.2.1", ALLOWED_HOSTS=["mcp.example.com"])
    )


def test_a_wildcard_host_warns():
    assert "wymcp.W004" in ids(Settings().evolve(ALLOWED_HOSTS=["*"]))


def test_auth_without_a_resource_warns_that_it_is_derived_from_host():
    settings = Settings().evolve(
        AUTH=_validator, AUTH_AUTHORIZATION_SERVERS=["https://auth.example.com"]
    )
    assert "wymcp.W006" in ids(settings)
    assert "wymcp.W006" not in ids(settings.evolve(AUTH_RESOURCE="https://h/mcp"))
    assert "wymcp.W006" not in ids(Settings())


def test_listing_offline_access_warns():
    settings = Settings().evolve(
        AUTH=_validator,
        AUTH_AUTHORIZATION_SERVERS=["https://auth.example.com"],
        AUTH_RESOURCE="https://h/mcp",
        AUTH_SCOPES_SUPPORTED=["mcp", "offline_access"],
    )
    problems = run_checks(settings, checks=CHECKS)
    (problem,) = [p for p in problems if p.id == "wymcp.W007"]
    assert "offline_access" in problem.message


def test_a_body_memory_budget_below_body_limit_warns() -> None:
    assert Settings().BODY_MEMORY_BUDGET == Settings().BODY_LIMIT  # no warning
    low = Settings().evolve(BODY_MEMORY_BUDGET=1024 * 1024)
    (problem,) = [p for p in run_checks(low, checks=CHECKS) if p.id == "wymcp.W013"]
    assert "always answered 503" in str(problem)
    assert "wymcp.W013" not in ids(Settings().evolve(BODY_MEMORY_BUDGET=None))
