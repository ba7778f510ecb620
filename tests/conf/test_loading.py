"""load_settings: a settings module, overrides, and errors that name the fix."""

from __future__ import annotations

import collections

import pytest

from wymcp.conf import ENVIRONMENT_VARIABLE, ImproperlyConfigured, load_settings


def problems_of(exc: pytest.ExceptionInfo[ImproperlyConfigured]) -> dict[str, str]:
    return {p.message.split(" ", 1)[0]: p.id for p in exc.value.problems}


def test_no_module_gives_the_defaults(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    settings = load_settings()
    assert settings.BODY_LIMIT == 4 * 1024 * 1024
    assert settings.STRICT is True
    assert (settings.HOST, settings.PORT, settings.PATH) == ("127.0.0.1", 8000, "/mcp")
    assert settings.PROTOCOL_VERSIONS[0] == "2026-07-28"
    assert settings.explicit == frozenset()
    assert len(settings.STATE_SECRET) >= 32


def test_a_module_overrides_defaults_and_lowercase_names_are_ignored(settings_module):
    name = settings_module(
        """
        BODY_LIMIT = 1024
        PORT = 9000
        ALLOWED_HOSTS = ["MCP.example.com:*"]
        helper = "lowercase names are not settings"
        """
    )
    settings = load_settings(name)
    assert settings.BODY_LIMIT == 1024
    assert settings.PORT == 9000
    assert settings.ALLOWED_HOSTS == ("mcp.example.com:*",)
    assert settings.module == name
    assert settings.is_overridden("PORT")
    assert not settings.is_overridden("HOST")
    assert settings.unknown == ()


def test_the_environment_variable_names_the_module(settings_module, monkeypatch):
    name = settings_module("PORT = 8123\n")
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, name)
    assert load_settings().PORT == 8123


def test_the_argument_wins_over_the_environment_variable(settings_module, monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, settings_module("PORT = 1\n"))
    assert load_settings(settings_module("PORT = 2\n")).PORT == 2


def test_overrides_win_over_the_module(settings_module):
    settings = load_settings(settings_module("PORT = 1\n"), PORT=3, STRICT=False)
    assert (settings.PORT, settings.STRICT) == (3, False)


def test_dotted_paths_are_imported(settings_module):
    name = settings_module('TOOLS = ["collections.OrderedDict", dict]\n')
    tools = load_settings(name).TOOLS
    assert tools == (collections.OrderedDict, dict)


def test_every_problem_is_reported_at_once_with_its_id(settings_module):
    name = settings_module(
        """
        BODY_LIMT = 10
        PORT = "8000"
        BODY_LIMIT = -1
        TOOLS = ["nowhere_at_all.Tool", "collections.NoSuchThing"]
        STRICT = 1
        """
    )
    with pytest.raises(ImproperlyConfigured) as exc:
        load_settings(name)
    ids = sorted(p.id for p in exc.value.problems)
    assert ids == sorted(
        [
            "wymcp.E002",
            "wymcp.E001",
            "wymcp.E004",
            "wymcp.E003",
            "wymcp.E003",
            "wymcp.E001",
        ]
    )
    text = str(exc.value)
    assert "BODY_LIMT is not a wymcp setting" in text
    assert "Did you mean BODY_LIMIT?" in text
    assert "PORT must be an integer, not str" in text
    assert "BODY_LIMIT must be at least 1" in text
    assert "'nowhere_at_all' cannot be imported" in text
    assert "has no attribute 'NoSuchThing'" in text
    assert "STRICT must be True or False, not int" in text


def test_an_unknown_name_resembling_nothing_is_only_remembered(settings_module):
    settings = load_settings(settings_module("TASKS_DATABASE = 'x.db'\n"))
    assert settings.unknown == ("TASKS_DATABASE",)


def test_an_unknown_override_is_an_error_even_when_it_resembles_nothing():
    with pytest.raises(ImproperlyConfigured, match="ZZZ is not a wymcp setting"):
        load_settings(None, ZZZ=1)
    with pytest.raises(ImproperlyConfigured, match="Did you mean BODY_LIMIT"):
        load_settings(None, body_limit=1)


def test_a_missing_module_names_the_fix():
    with pytest.raises(ImproperlyConfigured) as exc:
        load_settings("no_such_settings_module_anywhere")
    (problem,) = exc.value.problems
    assert problem.id == "wymcp.E005"
    assert "cannot be found" in problem.message
    assert ENVIRONMENT_VARIABLE in problem.hint


def test_a_module_that_raises_is_reported_without_a_traceback(settings_module):
    name = settings_module("raise RuntimeError('boom')\n")
    with pytest.raises(ImproperlyConfigured) as exc:
        load_settings(name)
    assert "raised RuntimeError: boom" in str(exc.value)
    assert exc.value.__cause__ is None
    assert exc.value.__suppress_context__


def test_a_module_with_a_missing_import_names_it(settings_module):
    name = settings_module("import not_installed_package_xyz\n")
    with pytest.raises(ImproperlyConfigured, match="'not_installed_package_xyz'"):
        load_settings(name)


@pytest.mark.parametrize(
    ("setting", "value", "expected"),
    [
        ("TOOLS", "pkg.Tool", "TOOLS must be a list or a tuple, not str"),
        ("TOOLS", ["not a path"], "is not a dotted path"),
        ("PORT", 70000, "PORT must be between 0 and 65535"),
        ("PORT", True, "PORT must be an integer, not bool"),
        ("PATH", "mcp", "PATH must be a URL path"),
        ("PATH", "/mcp?x=1", "PATH must be a URL path"),
        ("HOST", "", "HOST must not be empty"),
        ("ALLOWED_HOSTS", ["bad host!"], "is not a valid entry"),
        ("ALLOWED_ORIGINS", ["example.com"], "is not a valid entry"),
        ("ALLOWED_ORIGINS", [1], "must list strings, not int"),
        ("AUTH", 3, "AUTH must be None, a token validator"),
        ("AUTH_AUTHORIZATION_SERVERS", "https://a", "must be a list or a tuple"),
        ("AUTH_AUTHORIZATION_SERVERS", ["auth.example.com"], "absolute http"),
        ("AUTH_AUTHORIZATION_SERVERS", ['https://a"b'], "absolute http"),
        ("AUTH_RESOURCE", "https://h/mcp#x", "without a fragment"),
        ("AUTH_RESOURCE", 3, "a string or None"),
        ("AUTH_SCOPES_SUPPORTED", ["two words"], "not an OAuth scope"),
        ("AUTH_REQUIRED_SCOPES", [3], "not an OAuth scope"),
        ("MAX_STREAMS", 0, "at least 1"),
        ("BODY_MEMORY_BUDGET", 0, "at least 1"),
        ("BODY_MEMORY_BUDGET", 1.5, "must be an integer, not float"),
        ("MAX_CONNECTIONS", 0, "at least 1"),
        ("MAX_CONNECTIONS", 1.5, "must be an integer, not float"),
        ("HEADER_TIMEOUT", 0, "more than zero"),
        ("HEADER_TIMEOUT", float("inf"), "finite number of seconds"),
        ("CALL_TIMEOUT", 0, "more than zero"),
        ("CALL_TIMEOUT", "5", "number of seconds, not str"),
        ("TASK_TTL", 0, "more than zero"),
        ("TASK_POLL_INTERVAL", 0, "between 1 and 3600000"),
        ("MAX_TASKS", 0, "at least 1"),
        ("MAX_TASKS_PER_PRINCIPAL", 1.5, "must be an integer, not float"),
        ("TASK_LEASE", 0.1, "at least 0.5 seconds"),
        ("TASK_LEASE", "10", "number of seconds, not str"),
        ("PROTOCOL_VERSIONS", ["2024-11-05"], "not a revision wymcp serves"),
        ("PROTOCOL_VERSIONS", [], "at least one revision"),
        ("STATE_SECRET", "short", "at least 32 bytes"),
        ("STATE_SECRET", 5, "must be a string, bytes or None"),
        ("BODY_TIMEOUT", float("nan"), "finite number of seconds"),
        ("BODY_TIMEOUT", "3", "number of seconds, not str"),
        ("SHUTDOWN_GRACE", -1, "zero or more"),
        ("JSON_DEPTH_LIMIT", 1, "between 2 and 10000"),
        ("INSTRUCTIONS", 3, "a string or None"),
        ("ACCESS_LOG", "yes", "ACCESS_LOG must be True or False, not str"),
        ("CACHE_SCOPE", "shared", 'CACHE_SCOPE must be "public" or "private"'),
        ("CACHE_TTL", -1, "CACHE_TTL must be between 0 and 86400000"),
        ("STATE_TTL", 0, "more than zero"),
        ("CLIENT_REQUEST_TIMEOUT", "60", "number of seconds, not str"),
        ("SERVER_TITLE", 3, "a string or None"),
    ],
)
def test_each_bad_value_names_the_setting(setting, value, expected):
    with pytest.raises(ImproperlyConfigured, match=expected) as exc:
        load_settings(None, **{setting: value})
    (problem,) = exc.value.problems
    assert problem.message.startswith(setting)
    assert problem.hint


def test_conversions(settings_module):
    settings = load_settings(
        None,
        STATE_SECRET="s" * 32,
        PROTOCOL_VERSIONS=["2025-06-18", "2026-07-28"],
        SHUTDOWN_GRACE=0,
        CALL_TIMEOUT=None,
        AUTH_REQUIRED_SCOPES=["a", "b", "a"],
    )
    assert settings.STATE_SECRET == b"s" * 32
    assert settings.PROTOCOL_VERSIONS == ("2026-07-28", "2025-06-18")
    assert settings.SHUTDOWN_GRACE == 0.0
    assert settings.CALL_TIMEOUT is None
    assert settings.AUTH_REQUIRED_SCOPES == ("a", "b")
    assert settings.is_overridden("STATE_SECRET")


def test_an_explicit_none_secret_is_random_and_counts_as_unset():
    settings = load_settings(None, STATE_SECRET=None)
    assert len(settings.STATE_SECRET) == 32
    assert not settings.is_overridden("STATE_SECRET")


def test_messages_never_quote_a_huge_value():
    with pytest.raises(ImproperlyConfigured) as exc:
        load_settings(None, ALLOWED_HOSTS=["x y" * 10_000])
    assert len(str(exc.value)) < 1000


def test_a_long_dotted_path_is_quoted_at_most_120_characters():
    path = "pkg_that_is_not_there." * 500 + "Tool"
    with pytest.raises(ImproperlyConfigured) as exc:
        load_settings(None, TOOLS=[path])
    (problem,) = exc.value.problems
    assert problem.id == "wymcp.E003"
    assert path[:120] in problem.message
    assert path[:121] not in problem.message
    assert len(str(problem)) < 1000
