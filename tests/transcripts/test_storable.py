"""Every importer reads JSON through one door (``loads_json``), which replaces a lone
surrogate decoded from a ``\\ud800`` escape — UTF-8, and so PostgreSQL, cannot hold one — by
U+FFFD wherever it is (issue 14 #6: an ``openai_chat`` import with one was a 500)."""

from __future__ import annotations

import json

import pytest

from transcripts import parse, parse_path
from transcripts.base import ParsedSession

from .helpers import FIXTURES

ANTHROPIC = next((FIXTURES / "anthropic_session").iterdir())


def with_lone_surrogates(value):
    """``value`` with a lone surrogate added to every prose string (one with a space in it:
    never a type tag, role, id or time, which would change what the file means)."""
    if isinstance(value, dict):
        return {key: with_lone_surrogates(item) for key, item in value.items()}
    if isinstance(value, list):
        return [with_lone_surrogates(item) for item in value]
    if isinstance(value, str) and " " in value:
        return value + " \ud800"
    return value


def spoiled(text: str) -> bytes:
    """A JSON or JSON Lines text with lone surrogates, written as JSON escapes (ASCII)."""
    lines = text.splitlines() if text.lstrip().startswith("{") else [text]
    out = [json.dumps(with_lone_surrogates(json.loads(line))) for line in lines if line.strip()]
    assert "\\ud800" in out[0] or any("\\ud800" in line for line in out)
    return "\n".join(out).encode()


def assert_storable(sessions: list[ParsedSession]) -> int:
    """No lone surrogate anywhere (UTF-8 encoding raises on one); how many messages hold
    the replacement character."""
    replaced = 0
    for session in sessions:
        for record in (session, *session.messages):
            fields = {k: v for k, v in vars(record).items() if k != "messages"}
            json.dumps(fields, default=str, ensure_ascii=False).encode("utf-8")
        replaced += sum("\ufffd" in message.content for message in session.messages)
    return replaced


JSON_FIXTURES = [
    ("claude_code", FIXTURES / "claude_code_branches.jsonl"),
    ("codex", FIXTURES / "codex_legacy.jsonl"),
    ("chatgpt", FIXTURES / "chatgpt_conversations.json"),
    ("anthropic_session", ANTHROPIC / "transcript.jsonl"),
    ("anthropic_managed_agent", FIXTURES / "managed_agent" / "session-events.jsonl"),
    ("gemini_cli", FIXTURES / "gemini_cli" / "checkpoint-rename.json"),
]


@pytest.mark.parametrize(("fmt", "path"), JSON_FIXTURES, ids=[f for f, _ in JSON_FIXTURES])
def test_every_json_importer_replaces_lone_surrogates(fmt, path):
    data = spoiled(path.read_text(encoding="utf-8"))
    assert assert_storable(parse(data, format=fmt)) > 0


@pytest.mark.parametrize(
    ("fmt", "line"),
    [
        ("openai_chat", '[{"role": "user", "content": "h\\ud800i"}]'),
        ("ndjson_events", '{"ts": 1, "session_id": "s", "sender": "user", "text": "h\\udbffi"}'),
    ],
)
def test_openai_chat_and_events_replace_lone_surrogates(fmt, line):
    [session] = parse(line.encode(), format=fmt)
    [message] = session.messages
    assert message.content == "h\ufffdi"


def test_session_fields_and_metadata_keys_are_cleaned_too():
    data = (
        b'[{"role": "user", "content": "hi", "name": "al\\udc00ice",'
        b' "extra": {"k\\ud800": ["v\\ud800"]}}]'
    )
    [session] = parse(data, format="openai_chat")
    assert_storable([session])


def test_parse_path_cleans_as_parse_does(tmp_path):
    folder = tmp_path / ANTHROPIC.name
    folder.mkdir()
    for part in ANTHROPIC.iterdir():
        content = part.read_text(encoding="utf-8")
        folder.joinpath(part.name).write_bytes(
            spoiled(content) if part.name == "transcript.jsonl" else content.encode()
        )
    assert assert_storable(parse_path(folder)) > 0
