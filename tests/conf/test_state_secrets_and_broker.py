"""STATE_SECRETS (key rotation) and BROKER: conversion, checks, engine options."""

from __future__ import annotations

import pytest

from wymcp.conf import (
    ImproperlyConfigured,
    Settings,
    load_settings,
    run_checks,
    served_engine,
)
from wymcp.conf._engine import engine_options

NEW = "n" * 32
OLD = "o" * 40


def ids(settings: Settings) -> list[str]:
    return [problem.id for problem in run_checks(settings)]


def test_state_secrets_convert_to_bytes_in_order():
    settings = load_settings(None, STATE_SECRETS=[NEW, OLD.encode()])
    assert (NEW.encode(), OLD.encode()) == settings.STATE_SECRETS
    assert engine_options(settings).state_secrets == (NEW.encode(), OLD.encode())
    assert "wymcp.W002" not in ids(settings)


def test_the_default_is_no_rotation_list():
    assert Settings().STATE_SECRETS == ()
    assert Settings().BROKER is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("n" * 32, "must be a list or a tuple"),
        ([NEW, "short"], r"STATE_SECRETS\[1\] must be at least 32 bytes"),
        ([3], r"STATE_SECRETS\[0\] must be a string or bytes, not int"),
        ([None], r"STATE_SECRETS\[0\] must be a string or bytes, not None"),
    ],
)
def test_each_bad_secret_is_named_with_its_index(value, expected):
    with pytest.raises(ImproperlyConfigured, match=expected) as exc:
        load_settings(None, STATE_SECRETS=value)
    assert all(p.id in {"wymcp.E001", "wymcp.E004"} for p in exc.value.problems)
    assert all(NEW not in str(p) for p in exc.value.problems)


def test_every_bad_secret_is_named_at_once():
    with pytest.raises(ImproperlyConfigured) as exc:
        load_settings(None, STATE_SECRETS=["a", NEW, "b"])
    assert [p.message.split(" ")[0] for p in exc.value.problems] == [
        "STATE_SECRETS[0]",
        "STATE_SECRETS[2]",
    ]


def test_a_misspelt_name_points_at_the_setting(settings_module):
    with pytest.raises(ImproperlyConfigured, match="Did you mean STATE_SECRETS") as e:
        load_settings(settings_module(f"STATE_SECRETSS = [{NEW!r}]\n"))
    assert e.value.problems[0].id == "wymcp.E002"


def test_both_secret_settings_at_once_is_an_error():
    with pytest.raises(ImproperlyConfigured, match="both set") as exc:
        load_settings(None, STATE_SECRET=NEW, STATE_SECRETS=[OLD])
    assert exc.value.problems[0].id == "wymcp.E009"


def test_state_secret_alone_is_a_one_key_list_for_the_engine():
    options = engine_options(load_settings(None, STATE_SECRET=NEW))
    assert options.state_secret == NEW.encode()
    assert options.state_secrets == ()


@pytest.mark.parametrize(
    "url",
    ["redis://127.0.0.1:6379/0", "rediss://cache.example.com:6380", "unix:///r.sock"],
)
def test_broker_takes_a_redis_url(url):
    assert url == load_settings(None, BROKER=url).BROKER


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, "BROKER must be a string or None"),
        ("http://127.0.0.1:6379", "must be None or a Redis URL"),
        ("redis://a b", "must be None or a Redis URL"),
        ("redis://" + "h" * 5000, "must be None or a Redis URL"),
    ],
)
def test_a_bad_broker_is_refused_without_echo(value, expected):
    with pytest.raises(ImproperlyConfigured, match=expected) as exc:
        load_settings(None, BROKER=value)
    assert len(str(exc.value)) < 600


def test_a_broker_without_a_secret_is_an_error_not_a_warning():
    settings = load_settings(None, BROKER="redis://127.0.0.1:6379/0")
    problems = [p for p in run_checks(settings) if p.id == "wymcp.E008"]
    assert len(problems) == 1
    assert problems[0].is_error
    assert "wymcp.W002" not in ids(settings)
    assert "STATE_SECRETS" in problems[0].hint


@pytest.mark.parametrize("secret", [{"STATE_SECRET": NEW}, {"STATE_SECRETS": [NEW]}])
def test_a_broker_with_a_secret_passes(secret):
    settings = load_settings(None, BROKER="redis://127.0.0.1:6379/0", **secret)
    assert not {"wymcp.E008", "wymcp.W002"} & set(ids(settings))


def _without_the_broker(monkeypatch, absent):
    import importlib.util

    real = importlib.util.find_spec

    def find_spec(name, *args):
        if name == "wymcp.broker.redis":
            return absent()
        return real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def _no_spec():
    return None


def _no_namespace():  # `wymcp.broker` itself absent: find_spec raises
    raise ModuleNotFoundError("No module named 'wymcp.broker'", name="wymcp.broker")


@pytest.mark.parametrize("absent", [_no_spec, _no_namespace], ids=["spec", "parent"])
def test_a_broker_without_its_package_is_an_error_naming_it(monkeypatch, absent):
    _without_the_broker(monkeypatch, absent)
    settings = load_settings(None, BROKER="redis://127.0.0.1:6379/0", STATE_SECRET=NEW)
    (problem,) = [p for p in run_checks(settings) if p.id == "wymcp.E010"]
    assert problem.is_error
    assert "wymcp-broker-redis package is not installed" in problem.message
    assert "pip install wymcp-broker-redis" in problem.hint
    assert "[redis]" in problem.hint  # the alias still works for this release


@pytest.mark.parametrize("url", ["redis://h/0", "rediss://h/0", "unix:///tmp/r.sock"])
def test_building_a_server_without_the_broker_says_e010_not_a_traceback(
    monkeypatch, url
):
    _without_the_broker(monkeypatch, _no_spec)
    settings = load_settings(None, BROKER=url, STATE_SECRET=NEW)
    with pytest.raises(ImproperlyConfigured) as raised:
        served_engine(settings)
    assert [p.id for p in raised.value.problems] == ["wymcp.E010"]


def test_a_broker_installed_without_redis_says_e010_naming_it(monkeypatch):
    import sys

    # the broker's modules unloaded, and redis unimportable (`None` in sys.modules)
    for name in [m for m in sys.modules if m.startswith("wymcp.broker.redis")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "redis", None)
    settings = load_settings(None, BROKER="redis://h/0", STATE_SECRET=NEW)
    with pytest.raises(ImproperlyConfigured) as raised:
        served_engine(settings)
    (problem,) = raised.value.problems
    assert problem.id == "wymcp.E010"
    assert "wymcp-broker-redis cannot import redis" in problem.message


def test_with_the_redis_client_installed_there_is_no_such_error():
    settings = load_settings(None, BROKER="redis://127.0.0.1:6379/0", STATE_SECRET=NEW)
    assert "wymcp.E010" not in ids(settings)
