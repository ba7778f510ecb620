import attrs
import pytest

from wymcp.core.gates import Verdict


def test_a_verdict_is_frozen_with_empty_defaults():
    verdict = Verdict(accepted=True, data={"a": 1})
    assert verdict.refusal is None
    assert verdict.dropped == ()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        verdict.accepted = False  # type: ignore[misc]
