"""WYMCP_<NAME> variables: read by one rule per kind, checked by the same converters."""

from __future__ import annotations

import pytest

from wymcp.conf import (
    ENVIRONMENT_VARIABLE,
    ImproperlyConfigured,
    Settings,
    describe_settings,
    load_settings,
    run_checks,
)

KEY = "k" * 40


def test_a_variable_sets_its_setting_and_says_so(monkeypatch):
    monkeypatch.setenv("WYMCP_PORT", "9000")
    settings = load_settings()
    assert settings.PORT == 9000
    assert settings.origin("PORT") == "environment"
    assert settings.origin("HOST") == "default"
    assert settings.is_overridden("PORT")


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("STRICT", "false", False),
        ("STRICT", "Yes", True),
        ("ACCESS_LOG", "1", True),
        ("BODY_TIMEOUT", "2.5", 2.5),
        ("SHUTDOWN_GRACE", "0", 0.0),
        ("CALL_TIMEOUT", "none", None),
        ("CALL_TIMEOUT", "", None),
        ("BODY_MEMORY_BUDGET", "", None),
        ("ALLOWED_HOSTS", '["A.example", "b.example:*"]', ("a.example", "b.example:*")),
        ("ALLOWED_HOSTS", " a.example , b.example ", ("a.example", "b.example")),
        ("ALLOWED_HOSTS", "", ()),
        ("PROTOCOL_VERSIONS", "2025-06-18,2026-07-28", ("2026-07-28", "2025-06-18")),
        ("INSTRUCTIONS", "Be brief, please.", "Be brief, please."),
        ("INSTRUCTIONS", "", None),
        ("SERVER_NAME", "none", "none"),
        ("TOOLS", "collections.OrderedDict", (__import__("collections").OrderedDict,)),
        ("STATE_SECRET", KEY, KEY.encode()),
        ("STATE_SECRETS", f"{KEY},{'o' * 32}", (KEY.encode(), b"o" * 32)),
        ("CACHE_SCOPE", "private", "private"),
    ],
)
def test_each_kind_is_read_by_its_rule(monkeypatch, name, text, value):
    monkeypatch.setenv(f"WYMCP_{name}", text)
    assert getattr(load_settings(), name) == value


@pytest.mark.parametrize(
    ("name", "text", "problem_id", "expected"),
    [
        ("PORT", "nine", "wymcp.E001", "PORT must be an integer; the text given"),
        ("PORT", "70000", "wymcp.E004", "PORT must be between 0 and 65535."),
        ("PORT", "9" * 5000, "wymcp.E001", "PORT must be an integer"),
        ("STRICT", "maybe", "wymcp.E001", "STRICT must be true or false"),
        ("BODY_TIMEOUT", "soon", "wymcp.E001", "BODY_TIMEOUT must be a number"),
        ("BODY_TIMEOUT", "nan", "wymcp.E004", "finite number of seconds"),
        ("ALLOWED_HOSTS", "[1,", "wymcp.E001", "ALLOWED_HOSTS must be a list; the"),
        ("ALLOWED_HOSTS", "[1]", "wymcp.E001", "ALLOWED_HOSTS must list strings"),
        ("ALLOWED_HOSTS", "bad host!", "wymcp.E004", "is not a valid entry"),
        ("TOOLS", "nowhere_at_all.Tool", "wymcp.E003", "cannot be imported"),
    ],
)
def test_a_bad_value_has_the_same_id_and_names_the_variable(
    monkeypatch, name, text, problem_id, expected
):
    monkeypatch.setenv(f"WYMCP_{name}", text)
    with pytest.raises(ImproperlyConfigured) as exc:
        load_settings()
    (problem,) = exc.value.problems
    assert problem.id == problem_id
    assert problem.message.startswith(name)
    assert expected in problem.message
    assert f"environment variable WYMCP_{name}" in problem.message
    assert len(str(problem)) < 600


def test_a_secret_from_the_environment_is_never_quoted(monkeypatch):
    secret = "hunter2-is-not-long-enough"
    monkeypatch.setenv("WYMCP_STATE_SECRET", secret)
    monkeypatch.setenv("WYMCP_STATE_SECRETS", f"{KEY},{secret}")
    monkeypatch.setenv("WYMCP_BROKER", "redis://:hunter2-password@cache host/0")
    with pytest.raises(ImproperlyConfigured) as exc:
        load_settings()
    text = str(exc.value)
    assert {p.id for p in exc.value.problems} == {"wymcp.E004"}
    assert "hunter2" not in text
    assert "variable WYMCP_STATE_SECRET.)" in text
    assert "variable WYMCP_STATE_SECRETS.)" in text
    assert "variable WYMCP_BROKER.)" in text


def test_a_long_value_is_quoted_at_most_120_characters(monkeypatch):
    monkeypatch.setenv("WYMCP_ALLOWED_HOSTS", "x y" * 10_000)
    with pytest.raises(ImproperlyConfigured) as exc:
        load_settings()
    (problem,) = exc.value.problems
    assert "x y" * 41 not in problem.message
    assert "x y" * 39 in problem.message
    assert len(str(exc.value)) < 600


def test_precedence_override_then_environment_then_module(settings_module, monkeypatch):
    module = settings_module("PORT = 1\nHOST = '::1'\n")
    assert load_settings(module).origin("PORT") == "module"
    monkeypatch.setenv("WYMCP_PORT", "2")
    from_environment = load_settings(module)
    assert (from_environment.PORT, from_environment.origin("PORT")) == (
        2,
        "environment",
    )
    assert from_environment.origin("HOST") == "module"
    overridden = load_settings(module, PORT=3)
    assert (overridden.PORT, overridden.origin("PORT")) == (3, "override")
    assert overridden.evolve(HOST="127.0.0.1").origin("HOST") == "override"


def test_an_override_hides_a_bad_variable_s_value_not_its_name(monkeypatch):
    monkeypatch.setenv("WYMCP_PORT", "70000")
    assert load_settings(None, PORT=3).PORT == 3


def test_the_settings_module_variable_is_no_setting(settings_module, monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, settings_module("PORT = 8123\n"))
    settings = load_settings()
    assert settings.PORT == 8123
    assert settings.unknown == ()


def test_a_misspelt_variable_is_an_error_naming_the_variable(monkeypatch):
    monkeypatch.setenv("WYMCP_PROT", "9000")
    with pytest.raises(ImproperlyConfigured) as exc:
        load_settings()
    (problem,) = exc.value.problems
    assert problem.id == "wymcp.E002"
    assert problem.message == (
        "The environment variable WYMCP_PROT is not a wymcp setting."
    )
    assert problem.hint == "Did you mean WYMCP_PORT?"


def test_another_variable_is_a_warning(monkeypatch):
    monkeypatch.setenv("WYMCP_APP_DB", "tasks.sqlite3")
    settings = load_settings(None, STATE_SECRET=KEY, TOOLS=["collections.OrderedDict"])
    assert settings.unknown == ("WYMCP_APP_DB",)
    (warning,) = [p for p in run_checks(settings) if p.id == "wymcp.W001"]
    assert warning.message.startswith("WYMCP_APP_DB is not a wymcp setting")


def test_a_module_reading_the_secret_variable_into_its_list_is_no_conflict(
    settings_module, monkeypatch
):
    monkeypatch.setenv("WYMCP_STATE_SECRET", KEY)
    module = settings_module(
        "import os\nSTATE_SECRETS = [os.environ['WYMCP_STATE_SECRET'], 'o' * 32]\n"
    )
    settings = load_settings(module)
    assert (KEY.encode(), b"o" * 32) == settings.STATE_SECRETS
    assert not settings.is_overridden("STATE_SECRET")


def test_a_different_secret_in_the_environment_is_the_two_settings_conflict(
    settings_module, monkeypatch
):
    monkeypatch.setenv("WYMCP_STATE_SECRET", "n" * 32)
    with pytest.raises(ImproperlyConfigured) as exc:
        load_settings(settings_module(f"STATE_SECRETS = [{KEY!r}]\n"))
    assert [p.id for p in exc.value.problems] == ["wymcp.E009"]


def test_an_explicit_empty_secret_variable_counts_as_unset(monkeypatch):
    monkeypatch.setenv("WYMCP_STATE_SECRET", "")
    settings = load_settings()
    assert len(settings.STATE_SECRET) == 32
    assert settings.origin("STATE_SECRET") == "default"


def test_the_listing_says_where_each_value_came_from_and_hides_secrets(monkeypatch):
    monkeypatch.setenv("WYMCP_PORT", "9000")
    monkeypatch.setenv("WYMCP_STATE_SECRET", KEY)
    lines = describe_settings(load_settings(None, HOST="::1"))
    assert "PORT = 9000  [environment WYMCP_PORT]" in lines
    assert "HOST = '::1'  [override]" in lines
    assert "STRICT = True  [default]" in lines
    assert "STATE_SECRET = (hidden)  [environment WYMCP_STATE_SECRET]" in lines
    assert "BROKER = None  [default]" in lines
    assert not any(KEY in line for line in lines)
    assert len(lines) == len(Settings.__attrs_attrs__) - 3
