"""BMAD session folders, zipped: conversation.md read as such, metadata.yaml applied, the
memory files kept as text for the memories app."""

from __future__ import annotations

import io
import zipfile

import pytest

from transcripts import parse
from transcripts.base import ImportFormatError
from transcripts.detect import detect_format

from .helpers import check_invariants, fixture

METADATA = b"""
session:
  id: "session-2026-01-11-abc123"
  created_at: "2026-01-11T14:30:00Z"
  context:
    project_name: "E-Commerce Platform"
    primary_topic: "authentication"
    tags: ["oauth", "security"]
"""
DECISIONS = b"""
decisions:
  - id: "DEC-001"
    turn_ref: 2
    made_by: "bmad-master"
    decision: "Use multi-agent review for authentication requirements"
"""
STATE = b"agent_state:\n  agent_id: veritas\n  session_learnings: [Check MFA]\n"


def archive(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for name, data in files.items():
            out.writestr(name, data)
    return buffer.getvalue()


def folder(**extra: bytes) -> dict[str, bytes]:
    return {
        "sessions/abc/conversation.md": fixture("conversation.md"),
        "sessions/abc/metadata.yaml": METADATA,
        "sessions/abc/decisions.yaml": DECISIONS,
        "sessions/abc/agent-states/veritas.yaml": STATE,
        "sessions/abc/artifacts/notes.md": b"# not a memory file",
        **extra,
    }


def test_a_zipped_folder_is_one_session_with_its_memory_files():
    data = archive(folder())
    assert detect_format(data) == "bmad_session"
    [session] = parse(data)
    check_invariants(session)
    assert session.source_format == "bmad_session"
    assert session.external_id == "session-2026-01-11-abc123"
    assert session.topics == ["oauth", "security"]
    assert session.metadata["primary_topic"] == "authentication"
    assert session.metadata["memory_files"] == {
        "agent-states/veritas.yaml": STATE.decode(),
        "decisions.yaml": DECISIONS.decode(),
    }
    # the transcript is read as conversation.md is
    assert session.messages[1].metadata["memory_refs"] == ["DEC-001"]


def test_a_folder_without_its_session_id_is_named_by_the_folder():
    files = folder()
    del files["sessions/abc/metadata.yaml"]
    files["sessions/abc/conversation.md"] = (
        b"## Turn 1 - 2026-01-11 14:30:00\n**Speaker:** user\n\nhi\n"
    )
    [session] = parse(archive(files))
    assert session.external_id == "abc"
    assert "memory_files" in session.metadata


def test_a_broken_memory_file_is_refused_naming_it():
    data = archive(folder(**{"sessions/abc/findings.yaml": b"findings: [\n  - id: FIND-001\n"}))
    with pytest.raises(ImportFormatError) as caught:
        parse(data)
    assert caught.value.field == "sessions/abc/findings.yaml"
    assert "not valid YAML" in caught.value.message


def test_an_anthropic_folder_zip_is_still_detected_as_such():
    data = archive({"s/transcript.jsonl": b'{"role": "user", "content": "hi"}\n'})
    assert detect_format(data) == "anthropic_session"
