"""What a refusal quotes of the request: bounded on the wire, invisible ones escaped.

The request-dependent part of a refusal stays under 4 KiB as the refusal's JSON
text; the answer's envelope escapes that text once more (a `"` or `\\` takes two
bytes), so on the wire it stays under twice that: 8 KiB.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conftest import Answer, Wire

TEXT_BOUND = 4096
"""Characters of the refusal's JSON text that may depend on the request."""
WIRE_BOUND = 2 * TEXT_BOUND
"""Bytes of the answer on the wire that may depend on the request."""


async def _refused(wire: Wire, keys: list[str]) -> tuple[Answer, str]:
    data: dict[str, Any] = {"text": "ok", **dict.fromkeys(keys, 1)}
    answer = await wire.call("echo", {"action": "say", "data": data})
    assert answer.status == 200, answer
    result = answer.json()["result"]
    assert result["isError"] is True
    text: str = result["content"][0]["text"]
    return answer, text


@pytest.mark.parametrize("char", ['"', "\\", "\u202e", "\x01", "\U0001f600"])
async def test_twelve_long_keys_stay_within_the_bounds(wire: Wire, char: str) -> None:
    """12 unknown keys of 400 characters that escape the most, against short ones."""
    base, base_text = await _refused(wire, [f"k{i}" for i in range(12)])
    answer, text = await _refused(wire, [f"{i:02d}" + char * 400 for i in range(12)])
    in_text = len(json.dumps(json.loads(text))) - len(json.dumps(json.loads(base_text)))
    on_wire = answer.raw_size - base.raw_size
    assert in_text <= TEXT_BOUND, in_text
    assert on_wire <= WIRE_BOUND, on_wire  # measured 4,353 bytes for `"`


async def test_a_right_to_left_override_is_escaped_in_the_refusal(wire: Wire) -> None:
    """A raw U+202E would show the refusal's text around it reversed."""
    _, text = await _refused(wire, ["price\u202eevil", "a\u200bb"])
    assert "\u202e" not in text
    assert "\u200b" not in text
    message = json.loads(text)["message"]
    assert 'data["price\\u202eevil"]' in message
    assert 'data["a\\u200bb"]' in message
