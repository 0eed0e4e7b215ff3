import io
import json
import zipfile
from datetime import UTC, datetime

import pytest

from transcripts.base import ImportFormatError
from transcripts.formats.anthropic_session import parse_anthropic_session

from .helpers import FIXTURES, check_invariants, roles

SESSION_ID = "8f1c2d3e-4b5a-4c6d-9e8f-0a1b2c3d4e5f"
FOLDER = FIXTURES / "anthropic_session" / SESSION_ID
NAMES = ("transcript.jsonl", "events.jsonl", "metadata.json")


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def _folder_files(prefix: str = f"{SESSION_ID}/") -> dict[str, bytes]:
    return {prefix + name: (FOLDER / name).read_bytes() for name in NAMES}


def _check_fixture_session(session):
    check_invariants(session)
    assert session.external_id == SESSION_ID
    assert session.title == "Fix to_iso on Windows"
    assert session.agent_name == "amplifier"
    assert session.topics == ["dates", "windows"]
    assert session.metadata == {
        "profile": "bundle:foundation",
        "bundle": "foundation",
        "model": "claude-sonnet-4-5",
        "turn_count": 2,
    }
    assert session.started_at == datetime(2025, 10, 14, 12, 0, tzinfo=UTC)  # metadata "created"
    assert session.ended_at == datetime(2025, 10, 14, 12, 2, 10, tzinfo=UTC)
    assert len(session.messages) == 11
    assert roles(session) == {"user": 2, "assistant": 6, "tool": 3}
    prompt, text, bash, bash_result, read, read_result, edit, _, done, image, last = (
        session.messages
    )
    assert prompt.content == "The test `test_parse_dates` fails on Windows. Can you look?"
    assert prompt.client_id == "L1"
    assert text.content == "Let me run the test first."
    assert text.metadata == {"thinking": "Probably a path separator or time zone issue."}
    assert text.client_id == "L2"
    assert (bash.tool_name, bash.tool_call_id, bash.content) == (
        "bash",
        "toolu_01A",
        "pytest tests/test_dates.py -q",
    )
    assert bash.metadata["input_extra"] == {"timeout": 120}
    # no timestamp on those lines: events.jsonl times the call and its result
    assert bash.timestamp == datetime(2025, 10, 14, 12, 0, 9, 500000, tzinfo=UTC)
    assert bash_result.timestamp == datetime(2025, 10, 14, 12, 0, 11, 250000, tzinfo=UTC)
    assert bash_result.tool_call_id == "toolu_01A" and bash_result.tool_name == "bash"
    assert bash_result.client_id == "toolu_01A:result"
    assert bash_result.metadata == {"is_error": False}
    assert bash_result.content.endswith("1 failed in 0.12s")
    assert read.content == "Read src/dates.py"
    assert read_result.metadata == {"is_error": True}
    assert read_result.tool_name == "read_file"
    assert edit.content == (
        "Edit src/app/dates.py\n"
        "-return dt.isoformat()\n"
        "+return dt.isoformat().replace('+00:00', 'Z')"
    )
    assert done.content.endswith("✅")
    assert image.content == "[image]\nThanks! Is this screenshot the same bug?"
    # the second prompt:submit event dates the second prompt
    assert image.timestamp == datetime(2025, 10, 14, 12, 1, 58, tzinfo=UTC)
    assert last.content == "Yes — same missing `Z`."  # redacted thinking dropped


def test_zip_of_a_session_folder():
    [session] = parse_anthropic_session(_zip(_folder_files()))
    _check_fixture_session(session)


def test_mapping_of_files():
    [session] = parse_anthropic_session({name: (FOLDER / name).read_bytes() for name in NAMES})
    _check_fixture_session(session)


def test_zip_with_two_sessions():
    files = _folder_files()
    other = {
        "other-session/transcript.jsonl": b'{"role": "user", "content": "hello"}\n',
        "other-session/metadata.json": b'{"title": "Second"}',
        "__MACOSX/._junk": b"\x00\x01",
    }
    sessions = parse_anthropic_session(_zip({**files, **other}))
    assert [s.external_id for s in sessions] == [SESSION_ID, "other-session"]
    assert sessions[1].title == "Second"
    assert sessions[1].messages[0].content == "hello"


def test_lone_transcript_bytes():
    [session] = parse_anthropic_session((FOLDER / "transcript.jsonl").read_bytes())
    check_invariants(session)
    assert len(session.messages) == 11
    assert session.external_id == ""
    assert session.messages[1].timestamp is None  # no events to time it


def test_openai_style_tool_lines_are_understood():
    transcript = b"\n".join(
        [
            b'{"role": "user", "content": "list"}',
            b'{"role": "assistant", "content": "", "tool_calls": [{"id": "t1", '
            b'"tool": "bash", "arguments": {"command": "ls"}}]}',
            b'{"role": "tool", "tool_call_id": "t1", "content": "a.txt"}',
        ]
    )
    [session] = parse_anthropic_session({"transcript.jsonl": transcript})
    check_invariants(session)
    assert [(m.role, m.tool_name, m.content) for m in session.messages] == [
        ("user", "", "list"),
        ("assistant", "bash", "ls"),
        ("tool", "bash", "a.txt"),
    ]


@pytest.mark.parametrize(
    ("files", "line", "field", "words"),
    [
        ({"transcript.jsonl": b'{"role": "user", "content": 3}'}, 1, "content",
         "transcript.jsonl: 'content' must be a string or a list of blocks"),
        ({"transcript.jsonl": b'{"role": "user", "content": "a"}',
          "events.jsonl": b'{"ts": "2025-01-01T00:00:00Z"}\n{oops'}, 2, None,
         "events.jsonl: invalid JSON"),
        ({"transcript.jsonl": b'{"role": "user", "content": "a"}', "metadata.json": b"[1]"},
         None, None, "metadata.json must hold a JSON object"),
        ({"metadata.json": b"{}"}, None, None, "has no transcript.jsonl"),
        ({"transcript.jsonl": b'{"role": "user", "content": "a"}',
          "metadata.json": b'{\n  "title": "x",\n  oops\n}'}, 3, None,
         "invalid JSON in metadata.json"),
    ],
)  # fmt: skip
def test_errors_name_the_file_line_and_field(files, line, field, words):
    with pytest.raises(ImportFormatError) as caught:
        parse_anthropic_session(files)
    assert caught.value.line == line
    assert caught.value.field == field
    assert words in caught.value.message


def test_broken_zip_is_refused():
    with pytest.raises(ImportFormatError, match="not a readable zip archive"):
        parse_anthropic_session(b"PK\x03\x04 truncated archive")


def test_zip_without_transcript_is_refused():
    with pytest.raises(ImportFormatError, match=r"no transcript\.jsonl found"):
        parse_anthropic_session(_zip({"notes.txt": b"hello"}))


def test_metadata_keys_fill_session_fields():
    metadata = {
        "id": "s-42",
        "title": "Plan the sprint",
        "agent_name": "architect",
        "agent_persona": "Winston",
        "workflow": "planning",
        "user_name": "sam",
        "status": "interrupted",
        "topics": ["sprint"],
        "artifacts": ["plan.md"],
        "started_at": 1760443200,
    }
    [session] = parse_anthropic_session(
        {
            "transcript.jsonl": b'{"role": "user", "content": "go"}',
            "metadata.json": json.dumps(metadata).encode(),
        }
    )
    assert (
        session.external_id,
        session.title,
        session.agent_name,
        session.agent_persona,
        session.workflow,
        session.user_name,
        session.status,
        session.topics,
        session.artifacts,
        session.metadata,
    ) == (
        "s-42",
        "Plan the sprint",
        "architect",
        "Winston",
        "planning",
        "sam",
        "interrupted",
        ["sprint"],
        ["plan.md"],
        {},
    )
    assert session.started_at == datetime(2025, 10, 14, 12, 0, tzinfo=UTC)
