"""transcripts.sanitize: NUL out of text and JSON, strict UTF-8 with a usable error.

No database."""

import pytest

from transcripts.sanitize import (
    MAX_JSON_DEPTH,
    InvalidUTF8Error,
    clean_json,
    clean_surrogates,
    clean_text,
    could_be_too_deep,
    decode_utf8,
    json_too_deep,
)


@pytest.mark.parametrize(
    ("raw", "expected", "count"),
    [
        ("plain", "plain", 0),
        ("", "", 0),
        ("a\x00b", "ab", 1),
        ("\x00\x00start and end\x00", "start and end", 3),
        ("emoji 😀\x00 שלום \x00مرحبا", "emoji 😀 שלום مرحبا", 2),
        ("\x00", "", 1),
    ],
)
def test_clean_text_removes_nul_and_counts(raw, expected, count):
    assert clean_text(raw) == (expected, count)


def test_clean_text_keeps_other_control_characters():
    text = "tab\tcr\rff\x0cbell\x07esc\x1b"
    assert clean_text(text) == (text, 0)


def test_clean_json_walks_keys_and_values():
    value = {
        "na\x00me": "x\x00y",
        "list": ["\x00", 1, 2.5, None, True, {"k\x00": ["v\x00\x00"]}],
        "tuple": ("a\x00",),
        "n": 0,
    }
    cleaned, count = clean_json(value)
    assert cleaned == {
        "name": "xy",
        "list": ["", 1, 2.5, None, True, {"k": ["v"]}],
        "tuple": ("a",),
        "n": 0,
    }
    assert isinstance(cleaned["tuple"], tuple)
    assert count == 7
    # The input is not changed.
    assert value["na\x00me"] == "x\x00y"


def test_clean_json_on_scalars():
    assert clean_json("a\x00") == ("a", 1)
    assert clean_json(5) == (5, 0)
    assert clean_json(None) == (None, 0)


def test_clean_surrogates_replaces_lone_halves_only():
    assert clean_surrogates("a\ud800b\udfffc") == ("a\ufffdb\ufffdc", 2)
    assert clean_surrogates("😀 fine") == ("😀 fine", 0)


def test_decode_utf8_valid_text_and_bom():
    text = "Hello 😀 שלום مرحبا\n"
    assert decode_utf8(text.encode()) == text
    assert decode_utf8(b"\xef\xbb\xbf" + text.encode()) == text
    # Only one BOM is a byte-order mark; a second is content (U+FEFF).
    assert decode_utf8(b"\xef\xbb\xbf\xef\xbb\xbfx") == "\ufeffx"
    assert decode_utf8(bytearray(b"abc")) == "abc"
    assert decode_utf8(memoryview(b"abc")) == "abc"
    assert decode_utf8(b"") == ""


def test_decode_utf8_error_names_line_and_byte_offset():
    data = b"line one\nline two\nbad \xff here\n"
    with pytest.raises(ValueError) as info:
        decode_utf8(data)
    assert str(info.value) == "invalid UTF-8 at line 3, byte 22 of the request body"
    assert data[22] == 0xFF
    assert isinstance(info.value, InvalidUTF8Error)
    assert (info.value.line, info.value.offset) == (3, 22)


def test_decode_utf8_error_counts_the_bom_and_uses_what():
    data = b"\xef\xbb\xbf\n\xc3("  # a BOM, a newline, then a broken two-byte sequence
    with pytest.raises(InvalidUTF8Error) as info:
        decode_utf8(data, what="file notes.md")
    assert str(info.value) == "invalid UTF-8 at line 2, byte 4 of the file notes.md"


@pytest.mark.parametrize(
    ("data", "offset"),
    [
        (b"ok \xe2\x82", 3),  # truncated at the end
        (b"\xed\xa0\x80", 0),  # an encoded surrogate (CESU-8) is not UTF-8
        (b"\xc0\xaf", 0),  # overlong encoding of "/"
        ("é".encode("latin-1"), 0),
    ],
)
def test_decode_utf8_is_strict(data, offset):
    with pytest.raises(InvalidUTF8Error) as info:
        decode_utf8(data)
    assert info.value.offset == offset
    assert info.value.line == 1


def test_clean_json_takes_the_cleaning_function():
    value = {"k\ud800": ["a\udfff", {"b": "ok"}], "n": 1}
    assert clean_json(value, clean_surrogates) == (
        {"k\ufffd": ["a\ufffd", {"b": "ok"}], "n": 1},
        2,
    )


def nested(depth: int):
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "too_deep"),
    [
        ("text", False),
        ({}, False),
        (nested(MAX_JSON_DEPTH), False),
        (nested(MAX_JSON_DEPTH + 1), True),
        ({"a": [1, "x", {"b": nested(MAX_JSON_DEPTH - 3)}]}, False),
        ({"a": [1, "x", {"b": nested(MAX_JSON_DEPTH - 2)}]}, True),
        (nested(50_000), True),  # walked level by level: no RecursionError
    ],
)
def test_json_too_deep_counts_levels_of_objects_and_arrays(value, too_deep):
    assert json_too_deep(value) is too_deep


def test_could_be_too_deep_counts_brackets_as_an_upper_bound():
    assert not could_be_too_deep('{"a": [1, 2]}')
    assert could_be_too_deep("[" * (MAX_JSON_DEPTH + 1))
    assert could_be_too_deep(b"{" * (MAX_JSON_DEPTH + 1))
