import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wymcp.core.schema import decode_header_value, encode_header_value


@pytest.mark.parametrize(
    ("value", "header"),
    [
        ("us-west1", "us-west1"),
        ("Hello World", "Hello World"),
        ("", ""),
        (42, "42"),
        (-7, "-7"),
        (True, "true"),
        (False, "false"),
        ("Hello", "Hello"),
    ],
)
def test_plain_values_go_as_they_are(value, header):
    assert encode_header_value(value) == header


@pytest.mark.parametrize(
    "value",
    [
        "Grüße",
        " padded",
        "padded ",
        "tab\there",
        "line\nbreak",
        "=?base64?abc?=",
        "日本",
    ],
)
def test_other_strings_are_base64_wrapped_and_round_trip(value):
    header = encode_header_value(value)
    assert header.startswith("=?base64?")
    assert header.endswith("?=")
    assert header.isascii()
    assert decode_header_value(header) == value


def test_the_suite_cases_decode_as_the_spec_says():
    assert decode_header_value("=?base64?SGVsbG8=?=") == "Hello"
    assert decode_header_value("SGVsbG8=") == "SGVsbG8="
    assert decode_header_value("=?base64?SGVsbG8=") == "=?base64?SGVsbG8="


@pytest.mark.parametrize(
    "raw",
    [
        "=?base64?SGVsbG8?=",  # missing padding
        "=?base64?SGVs!!!bG8=?=",  # bad character
        "=?base64?SGVsbG9=?=",  # non-zero trailing bits: not canonical
        "=?base64?/w==?=",  # not UTF-8
        "=?base64?SGVsbG8=\n?=",  # a newline inside
        "=?base64?ü?=",  # not ASCII
    ],
)
def test_a_malformed_sentinel_raises_value_error(raw):
    with pytest.raises(ValueError, match="base64"):
        decode_header_value(raw)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_every_string_round_trips_through_a_header(value):
    header = encode_header_value(value)
    assert all(0x20 <= ord(char) <= 0x7E for char in header)
    assert decode_header_value(header) == value


@settings(max_examples=200, deadline=None)
@given(
    st.text()
    | st.text(alphabet="=?base64ABCabc+/0123456789").map(lambda s: f"=?base64?{s}?=")
)
def test_decoding_any_text_gives_a_string_or_value_error(raw):
    try:
        decoded = decode_header_value(raw)
    except ValueError:
        return
    assert isinstance(decoded, str)
