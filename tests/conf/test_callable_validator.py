"""AUTH accepts a validator object, a class, a plain or async callable, a path."""

from __future__ import annotations

import pytest

from wymcp.conf import ImproperlyConfigured, load_settings
from wymcp.core.server import Principal

SERVERS = {"AUTH_AUTHORIZATION_SERVERS": ["https://auth.example.com"]}

MODULE = """
from wymcp.core.server import Principal

class Validator:
    async def validate(self, token):
        return Principal(token)

class Broken:
    def __init__(self):
        raise RuntimeError("needs a key")

def plain(token):
    return Principal("plain:" + token)

async def coroutine(token):
    return Principal("async:" + token)

instance = Validator()
NOT_A_VALIDATOR = 3
"""


@pytest.mark.parametrize(
    ("attribute", "subject"),
    [
        ("Validator", "t"),
        ("instance", "t"),
        ("plain", "plain:t"),
        ("coroutine", "async:t"),
    ],
)
async def test_each_form_becomes_a_validator(settings_module, attribute, subject):
    module = settings_module(MODULE)
    settings = load_settings(None, AUTH=f"{module}.{attribute}", **SERVERS)
    assert settings.AUTH is not None
    assert await settings.AUTH.validate("t") == Principal(subject)


def test_an_instance_is_used_as_it_is(settings_module):
    module = settings_module(MODULE)
    first = load_settings(None, AUTH=f"{module}.instance", **SERVERS)
    assert type(first.AUTH).__name__ == "Validator"


def test_a_class_that_cannot_be_made_is_reported(settings_module):
    module = settings_module(MODULE)
    with pytest.raises(ImproperlyConfigured) as exc:
        load_settings(None, AUTH=f"{module}.Broken", **SERVERS)
    (problem,) = exc.value.problems
    assert problem.id == "wymcp.E004"
    assert "RuntimeError: needs a key" in problem.message
    assert "Give AUTH an instance" in problem.hint


def test_something_else_is_refused(settings_module):
    module = settings_module(MODULE)
    with pytest.raises(ImproperlyConfigured, match="AUTH must be None, a token"):
        load_settings(None, AUTH=f"{module}.NOT_A_VALIDATOR", **SERVERS)
