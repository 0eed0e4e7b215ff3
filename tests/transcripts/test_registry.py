import inspect
import shutil
from pathlib import Path

import pytest

from transcripts import FORMATS, ImportFormatError, parse, parse_path
from transcripts.registry import documentation_table, stored_formats

from .helpers import FIXTURES, SAMPLES, fixture, sample

REPO = Path(__file__).resolve().parents[2]


def test_every_format_declares_itself_once():
    """Each module of transcripts.formats is one format, listed by its own position."""
    positions = [declared.position for declared in FORMATS.values()]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    for name, declared in FORMATS.items():
        assert declared.name == name
        assert declared.description and declared.documentation
        assert callable(declared.parse), name
        assert not inspect.getmodule(declared.parse).__name__.startswith("django")
    # Our own export keeps each session's original format: it is no session's source.
    assert "memoryapp" not in dict(stored_formats())


def test_the_docs_table_is_the_registrys():
    """docs/api.md's table of import formats, as the registry writes it (a new format's
    module says what goes in its row)."""
    assert documentation_table() in (REPO / "docs" / "api.md").read_text()


def test_sessions_source_format_choices_come_from_the_registry():
    from sessions.models import Session

    choices = dict(Session._meta.get_field("source_format").choices)
    assert set(choices) == {"api", *dict(stored_formats())}


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
