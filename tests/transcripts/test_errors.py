"""Errors every format shares: empty input, bad UTF-8, broken JSON lines."""

import pytest

from transcripts import FORMATS, ImportFormatError, parse

# A valid line of each line-oriented format.
GOOD_LINE = {
    "claude_code": b'{"type": "progress", "sessionId": "s"}',
    "codex": b'{"type": "event_msg", "payload": {"type": "token_count"}}',
    "ndjson_events": b'{"ts": 1, "session_id": "s", "sender": "user", "text": "hi"}',
    "anthropic_session": b'{"role": "user", "content": "hi"}',
}
LINE_FORMATS = list(GOOD_LINE)


@pytest.mark.parametrize("name", list(FORMATS))
@pytest.mark.parametrize("data", [b"", b"\n  \n"])
def test_empty_file_is_refused_by_every_format(name, data):
    with pytest.raises(ImportFormatError, match="empty"):
        parse(data, format=name)


@pytest.mark.parametrize("name", list(FORMATS))
def test_invalid_utf8_is_located_by_every_format(name):
    data = b'{"a": 1}\n{"b": 2}\n{"text": "caf\xe9"}\n'
    with pytest.raises(ImportFormatError) as caught:
        parse(data, format=name)
    assert caught.value.line == 3
    assert "invalid UTF-8" in caught.value.message


@pytest.mark.parametrize("name", LINE_FORMATS)
def test_invalid_json_on_line_7(name):
    good = GOOD_LINE[name]
    data = b"\n".join([good] * 6 + [b'{"unterminated": "string}'] + [good])
    with pytest.raises(ImportFormatError) as caught:
        parse(data, format=name)
    assert caught.value.line == 7
    assert "invalid JSON" in caught.value.message
    assert caught.value.body()["line"] == 7
    assert str(caught.value).startswith("line 7")


@pytest.mark.parametrize("name", LINE_FORMATS)
def test_a_line_that_is_not_an_object(name):
    with pytest.raises(ImportFormatError) as caught:
        parse(GOOD_LINE[name] + b"\n[1, 2]\n", format=name)
    assert caught.value.line == 2
    assert "expected a JSON object" in caught.value.message


def test_utf16_with_bom_is_read():
    data = "User: hi ☃\nAssistant: hello".encode("utf-16")
    [session] = parse(data)
    assert session.messages[0].content == "hi ☃"
