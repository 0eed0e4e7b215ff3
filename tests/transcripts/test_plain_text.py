import pytest

from transcripts.base import ImportFormatError
from transcripts.formats.plain_text import parse_plain_text, preprocess_conversation

from .helpers import check_invariants


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("  hello  \n", "hello"),
        ("a\r\nb\rc", "a\nb\nc"),
        ("a\n\n\nb", "a\n\nb"),
        ("a\n\n\n\n\n\nb", "a\n\nb"),
        ("a\n\nb", "a\n\nb"),
        ("a\r\n\r\n\r\n\r\nb", "a\n\nb"),
        ("nul\x00byte", "nulbyte"),
        ("\x00 padded \x00", "padded"),
        ("a\n\x00\n\n\nb", "a\n\nb"),
        ("# Title\n\n* item **bold** `code`", "# Title\n\n* item **bold** `code`"),
    ],
)
def test_preprocess_conversation(raw, clean):
    assert preprocess_conversation(raw) == clean


def test_seed_example():
    [session] = parse_plain_text(b"User: Hello\nAssistant: Hi! How can I help?")
    check_invariants(session)
    assert [(m.role, m.content, m.client_id) for m in session.messages] == [
        ("user", "Hello", "0"),
        ("assistant", "Hi! How can I help?", "1"),
    ]


def test_prefixes_case_and_continuation_lines():
    text = (
        "SYSTEM: You are terse.\n"
        "human: First line\n"
        "second line\n\n\n\n"
        "    indented code\n"
        "ai : Reply with **markdown**\n"
        "- a list\n"
        "Tool: ls output\n"
        "AI: done ✅ مرحبا\n"
    )
    [session] = parse_plain_text(text.encode())
    assert [(m.role, m.content) for m in session.messages] == [
        ("system", "You are terse."),
        ("user", "First line\nsecond line\n\n    indented code"),
        ("assistant", "Reply with **markdown**\n- a list"),
        ("tool", "ls output"),
        ("assistant", "done ✅ مرحبا"),
    ]


def test_text_without_prefixes_is_one_user_message():
    [session] = parse_plain_text(b"Just a note\r\nwith two lines\x00")
    assert [(m.role, m.content) for m in session.messages] == [
        ("user", "Just a note\nwith two lines")
    ]


def test_preamble_before_first_prefix_is_a_user_message():
    [session] = parse_plain_text(b"Context pasted first\nAssistant: ok")
    assert [m.role for m in session.messages] == ["user", "assistant"]


def test_huge_message_is_not_truncated():
    body = "x" * 5_000_000
    [session] = parse_plain_text(f"User: {body}".encode())
    assert len(session.messages[0].content) == 5_000_000


@pytest.mark.parametrize("data", [b"", b"  \n\t\n", b"\x00\x00"])
def test_empty_input_is_refused(data):
    with pytest.raises(ImportFormatError, match="empty"):
        parse_plain_text(data)
