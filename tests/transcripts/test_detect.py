import io
import json
import zipfile

import pytest

from transcripts import FORMATS
from transcripts.base import ImportFormatError
from transcripts.detect import detect_format

from .helpers import FIXTURES, fixture, sample


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("claude_code/agentic-wallet.jsonl", "claude_code"),
        ("claude_code/raze.jsonl", "claude_code"),
        ("codex/firststep.jsonl", "codex"),
        ("aider/metadata-aider.chat.history.md", "aider"),
        ("openai_chat/tau-bench-airline-first10.json", "openai_chat"),
    ],
)
def test_real_samples_are_detected_from_content_alone(path, expected):
    assert detect_format(sample(path)) == expected
    assert detect_format(sample(path), filename="renamed.bin") == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("chatgpt_conversations.json", "chatgpt"),
        ("claude_code_branches.jsonl", "claude_code"),
        ("codex_legacy.jsonl", "codex"),
        ("conversation.md", "conversation_md"),
    ],
)
def test_fixtures_are_detected(path, expected):
    assert detect_format(fixture(path)) == expected


def test_anthropic_session_zip_and_transcript():
    folder = next((FIXTURES / "anthropic_session").iterdir())
    transcript = (folder / "transcript.jsonl").read_bytes()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("s/transcript.jsonl", transcript)
    assert detect_format(buffer.getvalue()) == "anthropic_session"
    assert detect_format(transcript) == "anthropic_session"


def test_ndjson_events_plain_text_and_openai_shapes():
    event = {"ts": 1, "source": "chainlit", "session_id": "s", "person_id": "p",
             "char_id": "c", "sender": "user", "text": "hi"}  # fmt: skip
    assert detect_format((json.dumps(event) + "\n" + json.dumps(event)).encode()) == (
        "ndjson_events"
    )
    assert detect_format(json.dumps(event).encode()) == "ndjson_events"  # a single line
    assert detect_format(b"User: Hello\nAssistant: Hi! How can I help?") == "plain_text"
    assert detect_format(b"\xef\xbb\xbfhuman: hi\nai: hello") == "plain_text"  # UTF-8 BOM
    messages = [{"role": "user", "content": "hi"}]
    assert detect_format(json.dumps(messages).encode()) == "openai_chat"
    assert detect_format(json.dumps({"messages": messages}).encode()) == "openai_chat"
    assert detect_format(json.dumps([messages]).encode()) == "openai_chat"
    fine_tuning = "\n".join(json.dumps({"messages": messages}) for _ in range(2))
    assert detect_format(fine_tuning.encode()) == "openai_chat"
    # role/content JSON Lines: OpenAI fields or Anthropic blocks decide
    openai_lines = '{"role": "user", "content": "x"}\n{"role": "tool", "tool_call_id": "1"}'
    anthropic_lines = (
        '{"role": "user", "content": "x"}\n'
        '{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n"}]}'
    )
    assert detect_format(openai_lines.encode()) == "openai_chat"
    assert detect_format(anthropic_lines.encode()) == "anthropic_session"


def test_early_codex_rollout_without_state_lines():
    lines = [
        {"id": "s", "timestamp": "2025-05-01T00:00:00Z", "git": None},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    ]
    data = "\n".join(json.dumps(line) for line in lines).encode()
    assert detect_format(data) == "codex"


def test_file_name_breaks_ties_only():
    assert detect_format(b"[]", filename="exports/conversations.json") == "chatgpt"
    assert detect_format(b"some notes without speakers", filename="log.txt") == "plain_text"
    # content wins over a misleading name
    assert detect_format(b"User: hi", filename="conversations.json") == "plain_text"


def test_broken_json_line_does_not_hide_the_format():
    lines = sample("claude_code/raze.jsonl").split(b"\n")
    lines[3] = b"{broken"
    assert detect_format(b"\n".join(lines)) == "claude_code"


def test_unknown_content_lists_the_formats():
    with pytest.raises(ImportFormatError) as caught:
        detect_format(b"<html><body>hello</body></html>")
    message = caught.value.message
    assert message.startswith("cannot tell the format")
    assert all(name in message for name in FORMATS)


def test_broken_json_document_says_where():
    with pytest.raises(ImportFormatError) as caught:
        detect_format(b'[\n  {"role": "user",\n   "content": }\n]')
    assert caught.value.line == 3
    assert "invalid JSON" in caught.value.message


@pytest.mark.parametrize("data", [b"", b"   \n\n"])
def test_empty_data(data):
    with pytest.raises(ImportFormatError, match="empty"):
        detect_format(data)


def test_invalid_utf8_says_where():
    with pytest.raises(ImportFormatError) as caught:
        detect_format(b"User: hi\nAssistant: caf\xc3(")
    assert caught.value.line == 2
    assert "invalid UTF-8" in caught.value.message
    assert "byte offset 23 (byte 15 of the line)" in caught.value.message
