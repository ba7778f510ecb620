"""Settings: a frozen value with defaults; evolve() checks what it changes."""

from __future__ import annotations

import attrs
import pytest

from wymcp.conf import ImproperlyConfigured, Settings


def test_settings_are_frozen():
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        Settings().PORT = 1  # type: ignore[misc]


def test_each_process_default_secret_is_random():
    assert Settings().STATE_SECRET != Settings().STATE_SECRET


def test_evolve_checks_and_records_what_it_sets():
    settings = Settings().evolve(PORT=9001, ALLOWED_HOSTS=("Example.COM",))
    assert settings.PORT == 9001
    assert settings.ALLOWED_HOSTS == ("example.com",)
    assert settings.is_overridden("PORT")
    with pytest.raises(ImproperlyConfigured, match="Did you mean PORT"):
        Settings().evolve(PROT=1)


def test_the_secret_is_not_in_the_repr():
    settings = Settings().evolve(STATE_SECRET="x" * 40)
    assert "xxxx" not in repr(settings)


async def _validator(token: str) -> object:
    return token


def test_auth_needs_an_authorization_server():
    with pytest.raises(ImproperlyConfigured) as exc:
        Settings().evolve(AUTH=_validator)
    (problem,) = exc.value.problems
    assert problem.id == "wymcp.E007"
    assert "AUTH_AUTHORIZATION_SERVERS" in problem.message
    settings = Settings().evolve(
        AUTH=_validator, AUTH_AUTHORIZATION_SERVERS=("https://auth.example.com",)
    )
    assert settings.AUTH is not None
