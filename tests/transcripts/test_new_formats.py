"""Gemini CLI, Cursor and OpenCode sessions: detected from their content, read with their
tool calls joined to the results, and refused clearly when they are not what they claim."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from transcripts import ImportFormatError, detect_format, parse, parse_path
from transcripts.files import find_transcripts
from transcripts.formats.cursor import exported_at

from .helpers import FIXTURES, check_invariants

GEMINI = FIXTURES / "gemini_cli"
GEMINI_JSON = GEMINI / "session-2025-10-18T14-57-f3c1e2d4.json"
GEMINI_JSONL = GEMINI / "session-2026-03-02T09-14-9a8b7c6d.jsonl"
CHECKPOINT = GEMINI / "checkpoint-rename.json"
CURSOR = FIXTURES / "cursor" / "cursor_add_rate_limiting_to_the_login_route.md"
OPENCODE = FIXTURES / "opencode" / "ses_6b1f0c2a3ffeQ9tWmZ4kV8nR2d.json"


def _shape(path) -> list[tuple[str, str, str]]:
    [session] = parse_path(path)
    check_invariants(session)
    return [(m.role, m.tool_name, m.tool_call_id) for m in session.messages]


@pytest.mark.parametrize(
    ("path", "fmt"),
    [(GEMINI_JSON, "gemini_cli"), (GEMINI_JSONL, "gemini_cli"), (CHECKPOINT, "gemini_cli"),
     (CURSOR, "cursor"), (OPENCODE, "opencode")],
    ids=lambda value: getattr(value, "name", value),
)  # fmt: skip
def test_detected_from_content_even_renamed(path, fmt):
    data = path.read_bytes()
    assert detect_format(data, path.name) == fmt
    assert detect_format(data, "renamed.txt") == fmt
    assert parse(data, filename="x").skipped == {}


def test_gemini_chat_recording():
    assert _shape(GEMINI_JSON) == [
        ("user", "", ""),
        ("assistant", "list_directory", "list_directory-1760799451650-5979488a89c64"),
        ("tool", "list_directory", "list_directory-1760799451650-5979488a89c64"),
        ("assistant", "read_file", "read_file-1760799465000-abc123"),
        ("tool", "read_file", "read_file-1760799465000-abc123"),
        ("assistant", "", ""),
    ]
    [session] = parse_path(GEMINI_JSON)
    call, result = session.messages[1], session.messages[2]
    assert call.content == "path: /home/dev/shop-api"
    assert call.metadata["thinking"].startswith("**Exploring the Project** I'll list")
    assert call.metadata["displayName"] == "ReadFolder"
    assert result.content.startswith("Directory listing for /home/dev/shop-api:")
    assert result.metadata == {"status": "success"}
    assert session.external_id == "f3c1e2d4-7a9b-4c1d-9e8f-2b3a4c5d6e7f"
    assert session.agent_name == "gemini-cli"
    assert session.started_at == datetime(2025, 10, 18, 14, 57, 28, 974000, tzinfo=UTC)
    assert session.metadata["models"] == ["gemini-2.5-pro"]
    assert session.metadata["usage"]["input_tokens"] == 8396 + 9000 + 9120


def test_gemini_jsonl_applies_rewinds_and_metadata_updates():
    assert _shape(GEMINI_JSONL) == [
        ("user", "", ""),  # m2 was rewound away
        ("assistant", "run_shell_command", "run_shell_command-1772442860500-1f2e3d"),
        ("tool", "run_shell_command", "run_shell_command-1772442860500-1f2e3d"),
        ("system", "", ""),
    ]
    [session] = parse_path(GEMINI_JSONL)
    assert session.title == "Run the failing test suite"  # from the $set line
    assert session.messages[0].content == "Run the tests"  # content as a list of parts
    assert session.messages[1].content == "npm test"
    assert session.messages[2].metadata == {"status": "error", "is_error": True}
    assert session.messages[3].metadata == {"notice": "info"}
    assert session.ended_at == datetime(2026, 3, 2, 9, 14, 25, tzinfo=UTC)


def test_gemini_checkpoint_joins_calls_and_responses_by_name():
    assert _shape(CHECKPOINT) == [
        ("user", "", ""),
        ("assistant", "read_file", "C1.1"),
        ("tool", "read_file", "C1.1"),
        ("assistant", "replace", "C3.0"),
        ("tool", "replace", "C3.0"),
        ("assistant", "", ""),
    ]
    [session] = parse_path(CHECKPOINT)
    assert session.messages[1].metadata["thinking"] == "I'll read the file first."
    assert session.messages[2].content == "export function getUser(id: string) {}"


def test_gemini_unknown_message_types_are_counted():
    record = json.loads(GEMINI_JSON.read_text())
    record["messages"].insert(1, {"id": "x", "timestamp": "2025-10-18T14:57:29Z",
                                  "type": "zz_compression", "content": "…"})  # fmt: skip
    parsed = parse(json.dumps(record).encode())
    assert parsed.skipped == {"unknown message type 'zz_compression'": 1}
    assert len(parsed[0].messages) == 6


def test_cursor_export():
    [session] = parse_path(CURSOR)
    check_invariants(session)
    assert [m.role for m in session.messages] == ["user", "assistant", "user", "assistant"]
    reply = session.messages[1].content
    # The reply's own Markdown rule stays in the reply: it starts no turn.
    assert reply.startswith("I'll add Flask-Limiter") and "---\n\nTwo notes:" in reply
    assert reply.endswith("Add `Flask-Limiter` to `requirements.txt`.")
    assert session.messages[2].content == "We run 4 workers. Use the Redis we already have."
    assert session.title == "Add rate limiting to the login route"
    assert session.ended_at == datetime(2025, 7, 8, 18, 55, 38, tzinfo=UTC)  # 11:55:38 PDT
    assert session.metadata == {"exported_at": "7/8/2025 at 11:55:38 PDT",
                                "cursor_version": "1.2.2"}  # fmt: skip
    # The same export again is the same session.
    assert parse_path(CURSOR)[0].external_id == session.external_id


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("19/10/2025 at 12:29:42 GMT+8", datetime(2025, 10, 19, 4, 29, 42, tzinfo=UTC)),
        ("10/31/2025 at 14:35:25 GMT+7", datetime(2025, 10, 31, 7, 35, 25, tzinfo=UTC)),
        ("7/29/2025 at 18:51:14 EDT", datetime(2025, 7, 29, 22, 51, 14, tzinfo=UTC)),
        ("2025. 6. 27. at 14시 17분 35초 GMT+9", None),  # a locale we do not read: kept as text
        ("7/8/2025 at 11:55:38 XYZ", None),
    ],
)
def test_cursor_export_times(written, expected):
    assert exported_at(written) == expected


def test_opencode_export():
    assert _shape(OPENCODE) == [
        ("user", "", ""),
        ("assistant", "bash", "toolu_01Kq3hGfS8wVn2"),
        ("tool", "bash", "toolu_01Kq3hGfS8wVn2"),
        ("assistant", "edit", "toolu_01Pz7cXbR4mLs9"),
        ("tool", "edit", "toolu_01Pz7cXbR4mLs9"),
        ("assistant", "read", "toolu_01Wd2nVt6yHk0e"),
        ("tool", "read", "toolu_01Wd2nVt6yHk0e"),
        ("assistant", "", ""),  # the text came after the tools: it stays after them
    ]
    [session] = parse_path(OPENCODE)
    call, result = session.messages[1], session.messages[2]
    assert call.content == "npm test -- cart"
    assert call.metadata["thinking"].startswith("Run the test to see the failure")
    assert call.timestamp == datetime(2025, 8, 5, 13, 20, 1, 500000, tzinfo=UTC)
    assert result.timestamp == datetime(2025, 8, 5, 13, 20, 6, 200000, tzinfo=UTC)
    assert session.messages[6].metadata == {"status": "error", "is_error": True}
    assert session.external_id == "ses_6b1f0c2a3ffeQ9tWmZ4kV8nR2d"
    assert session.title == "Fix the failing cart total test"
    assert session.metadata["cwd"] == "/home/dev/shop-api"
    assert session.metadata["cost"] == 0.0132
    assert session.metadata["tokens"]["cache_read"] == 11800


def test_opencode_messages_alone_and_unknown_parts():
    export = json.loads(OPENCODE.read_text())
    export["messages"][1]["parts"].append({"id": "prt_z", "type": "zz_hologram"})
    messages_only = json.dumps(export["messages"]).encode()
    assert detect_format(messages_only) == "opencode"
    parsed = parse(messages_only)
    assert parsed.skipped == {"unknown part type 'zz_hologram'": 1}
    # Without the session's info, the messages still name their session.
    assert parsed[0].external_id == "ses_6b1f0c2a3ffeQ9tWmZ4kV8nR2d"
    assert len(parsed[0].messages) == 8


@pytest.mark.parametrize(
    ("fmt", "data", "words"),
    [
        ("gemini_cli", b'{"messages": []}', "does not look like a Gemini CLI session"),
        ("gemini_cli", b'{"sessionId": "s", "projectHash": "h", "messages": [{"id": "a", '
                       b'"type": "gemini", "toolCalls": "x"}]}', "'toolCalls' must be a list"),
        ("cursor", b"# Notes\n\nJust notes.\n", "does not look like a Cursor chat export"),
        ("opencode", b'{"title": "x"}', "does not look like an OpenCode session"),
        ("opencode", b'{"info": {}, "messages": [{"info": {"role": "user", "id": "m"}, '
                     b'"parts": {}}]}', "'parts' must be a list"),
    ],
)  # fmt: skip
def test_files_that_are_not_the_format_are_refused(fmt, data, words):
    with pytest.raises(ImportFormatError) as caught:
        parse(data, format=fmt)
    assert words in caught.value.message


def test_discovery_skips_gemini_prompt_logs(tmp_path):
    project = tmp_path / "tmp" / "5d2f8c0e"
    (project / "chats").mkdir(parents=True)
    (project / "chats" / GEMINI_JSON.name).write_bytes(GEMINI_JSON.read_bytes())
    (project / "checkpoint-rename.json").write_bytes(CHECKPOINT.read_bytes())
    (project / "logs.json").write_text('[{"sessionId": "s", "type": "user", "message": "hi"}]')
    (tmp_path / "logs.json").write_text("[]")  # no chats/ beside it: not Gemini's, kept
    found = {p.relative_to(tmp_path).as_posix() for p in find_transcripts([tmp_path])}
    assert found == {
        "tmp/5d2f8c0e/chats/" + GEMINI_JSON.name,
        "tmp/5d2f8c0e/checkpoint-rename.json",
        "logs.json",
    }
