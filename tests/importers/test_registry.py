import inspect
import shutil
from pathlib import Path

import pytest

from transcripts import FORMATS, ImportFormatError, parse, parse_path
from transcripts.detect import FORMAT_NAMES

from .helpers import FIXTURES, SAMPLES, fixture, sample


def test_registry_names_match_detection_and_brief():
    assert (
        tuple(FORMATS)
        == FORMAT_NAMES
        == (
            "claude_code",
            "codex",
            "aider",
            "chatgpt",
            "openai_chat",
            "anthropic_session",
            "anthropic_managed_agent",
            "bmad_session",
            "ndjson_events",
            "conversation_md",
            "plain_text",
            "gemini_cli",
            "cursor",
            "opencode",
            "memoryapp",
        )
    )
    for name, parser in FORMATS.items():
        assert callable(parser), name
        assert not inspect.getmodule(parser).__name__.startswith("django")


def test_parse_detects_and_sets_source_format():
    [session] = parse(sample("claude_code/raze.jsonl"))
    assert session.source_format == "claude_code"
    sessions = parse(fixture("chatgpt_conversations.json"), filename="conversations.json")
    assert {s.source_format for s in sessions} == {"chatgpt"}


def test_parse_with_explicit_format_and_options():
    [session] = parse(
        sample("aider/metadata-aider.chat.history.md"),
        format="aider",
        input_history=sample("aider/metadata-aider.input.history"),
    )
    assert session.ended_at is not None  # only the input history gives times beyond the start
    [session] = parse(b"no speaker here", format="plain_text")
    assert session.messages[0].role == "user"
    [session] = parse({"transcript.jsonl": b'{"role": "user", "content": "hi"}'})
    assert session.source_format == "anthropic_session"


def test_unknown_format_lists_the_known_ones():
    with pytest.raises(ImportFormatError) as caught:
        parse(b"User: hi", format="slack")
    assert caught.value.field == "format"
    assert "unknown format 'slack'" in caught.value.message
    assert "claude_code, codex, aider" in caught.value.message


def test_unknown_option_is_an_error():
    with pytest.raises(ImportFormatError) as caught:
        parse(b"User: hi", format="plain_text", input_history=b"")
    assert "does not take the option(s) input_history" in caught.value.message


def test_parse_path_file_folder_and_aider_sibling(tmp_path: Path):
    [session] = parse_path(SAMPLES / "codex" / "firststep.jsonl")
    assert session.source_format == "codex"
    folder = next((FIXTURES / "anthropic_session").iterdir())
    [session] = parse_path(folder)
    assert session.title == "Fix to_iso on Windows"
    [same] = parse_path(folder / "transcript.jsonl")  # its metadata.json is read too
    assert same.title == session.title
    # aider: the sibling .aider.input.history is picked up
    aider = SAMPLES / "aider"
    shutil.copy(aider / "metadata-aider.chat.history.md", tmp_path / ".aider.chat.history.md")
    [alone] = parse_path(tmp_path / ".aider.chat.history.md")
    assert alone.messages[1].timestamp == alone.started_at
    shutil.copy(aider / "metadata-aider.input.history", tmp_path / ".aider.input.history")
    [paired] = parse_path(tmp_path / ".aider.chat.history.md")
    assert paired.messages[1].timestamp > paired.started_at


def test_parse_path_errors(tmp_path: Path):
    with pytest.raises(ImportFormatError, match="is not a session folder"):
        parse_path(tmp_path)
    with pytest.raises(ImportFormatError, match="no such file or folder"):
        parse_path(tmp_path / "missing.jsonl")
