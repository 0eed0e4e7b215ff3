import json
from datetime import UTC, datetime

import pytest

from transcripts.base import ImportFormatError
from transcripts.formats.claude_code import parse_claude_code

from .helpers import check_invariants, fixture, roles, sample


def _jsonl(*records: dict) -> bytes:
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode()


def test_agentic_wallet_sample():
    # 13 lines: permission-mode, snapshot, a prompt, 2 attachments, 2 API messages split over
    # 3 lines each (thinking / tool_use / redacted_thinking), a tool result, a skill injection.
    [session] = parse_claude_code(sample("claude_code/agentic-wallet.jsonl"))
    check_invariants(session)
    assert session.external_id == "01131ba6-a26e-449d-8862-cc913608c7c2"
    assert session.agent_name == "claude-code"
    assert [m.role for m in session.messages] == [
        "user",
        "assistant",
        "tool",
        "system",
        "assistant",
    ]
    prompt, skill_call, skill_result, injected, bash_call = session.messages
    assert prompt.content == "help me apply for the agentic engineering grant by Superteam"
    assert prompt.client_id == "5ec98b86-808e-4add-9a5f-b8d279b825c4"
    # A message with no text: its thinking goes to its first tool call, redacted thinking nowhere.
    assert skill_call.tool_name == "Skill"
    assert skill_call.tool_call_id == "chatcmpl-tool-ace28b19925d020d"
    assert skill_call.client_id == (
        "gen-1776002797-A9hRouEIgcax6w1hiunZ#chatcmpl-tool-ace28b19925d020d"
    )
    assert skill_call.content == "skill: apply-grant"
    assert skill_call.metadata["thinking"].startswith("I'll help the user apply")
    assert skill_call.metadata["model"] == "nvidia/nemotron-3-super-120b-a12b-20230311:free"
    assert "openrouter.reasoning" not in json.dumps([m.metadata for m in session.messages])
    assert skill_result.tool_call_id == skill_call.tool_call_id
    assert skill_result.tool_name == "Skill"
    assert skill_result.content == "Launching skill: apply-grant"
    assert injected.metadata == {"injected": True}
    assert injected.content.startswith("Base directory for this skill:")
    assert bash_call.tool_name == "Bash"
    assert bash_call.content == "bash ~/.claude/skills/apply-grant/export-session.sh ."
    assert bash_call.metadata["input_extra"] == {
        "description": "Export session transcript for grant application"
    }
    assert session.metadata == {
        "cwd": "/Users/nicksol/Desktop/agentic-wallet",
        "git_branch": "main",
        "version": "2.1.97",
        "models": ["nvidia/nemotron-3-super-120b-a12b-20230311:free"],
        "entrypoint": "cli",
    }
    assert session.started_at == datetime(2026, 4, 12, 14, 6, 31, 844000, tzinfo=UTC)
    assert session.ended_at == datetime(2026, 4, 12, 14, 6, 52, 41000, tzinfo=UTC)
    assert session.title == ""  # the file has no ai-title record


def test_raze_sample_merges_split_api_messages():
    # 25 lines, 11 of them progress hooks; three API messages split over 2-3 lines each.
    [session] = parse_claude_code(sample("claude_code/raze.jsonl"))
    check_invariants(session)
    assert session.external_id == "dfa38aaf-80e5-499c-a197-76e137fe699b"
    assert [m.role for m in session.messages] == [
        "user",
        "assistant",  # Skill call
        "tool",
        "system",  # skill text injected by the harness (isMeta)
        "assistant",  # text of msg_01MhQW21
        "assistant",  # Bash call of msg_01MhQW21
        "tool",
        "assistant",  # text of msg_01NxDLHb
        "assistant",  # Bash call of msg_01NxDLHb (no result: the file ends there)
    ]
    text = session.messages[4]
    assert text.client_id == "msg_01MhQW21coMp7CBznp9r1WzT"
    assert text.content.startswith("Using the **apply-grant** skill")
    assert "thinking" not in text.metadata  # the thinking block was empty (signature only)
    assert text.metadata["request_id"] == "req_011Ca8mLaAVNjGW163NpPeYg"
    # usage of the last line of the message, which has the final output_tokens
    assert text.metadata["usage"]["output_tokens"] == 351
    assert text.timestamp == datetime(2026, 4, 17, 5, 8, 47, 51000, tzinfo=UTC)
    call = session.messages[5]
    assert call.client_id == "msg_01MhQW21coMp7CBznp9r1WzT#toolu_01TE3cH6bKBJo5AmJX27piUw"
    assert call.content.startswith("_TEL_TIER=$(cat ~/.superstack/config.json")
    result = session.messages[6]
    assert result.tool_call_id == "toolu_01TE3cH6bKBJo5AmJX27piUw"
    assert result.tool_name == "Bash"
    assert result.content == "TELEMETRY: anonymous\nTEL_PROMPTED: yes"
    assert result.metadata["is_error"] is False
    assert session.metadata["models"] == ["claude-opus-4-6"]
    assert session.metadata["version"] == "2.1.81"
    assert not any("progress" in m.content for m in session.messages)


def test_branches_sidechains_compaction_and_titles():
    [session] = parse_claude_code(fixture("claude_code_branches.jsonl"))
    check_invariants(session)
    ids = [m.client_id for m in session.messages]
    assert ids == [
        "u1",
        "msg_A01",
        "msg_A01#toolu_R1",
        "msg_A01#toolu_B1",
        "r1",  # on a sibling branch (parallel tool calls) but answers a thread call
        "r2",
        "msg_B02#toolu_E1",  # written twice in the file, imported once
        "r3",
        "msg_C03",
        "u2b",  # the edited prompt; the abandoned "u2" branch is gone
        "msg_E05#toolu_B2",
        "r4",
        "cs1",  # after the compact boundary: history before it is kept
        "u3",
        "sc1",
        "msg_S06",
        "msg_F07",
    ]
    by_id = {m.client_id: m for m in session.messages}
    assert "Also add a docstring" not in [m.content for m in session.messages]
    assert by_id["msg_B02#toolu_E1"].metadata["thinking"] == "add() subtracts; that is the bug."
    assert by_id["msg_B02#toolu_E1"].content == (
        "Edit /home/dev/calc/calc.py\n-    return a - b\n+    return a + b"
    )
    assert by_id["msg_E05#toolu_B2"].content == "pytest -q tests/"
    assert by_id["r2"].metadata["is_error"] is True
    assert by_id["r2"].content == "F\n1 failed in 0.03s"
    assert by_id["cs1"].role == "system"
    assert by_id["cs1"].metadata == {"injected": True, "compact_summary": True}
    assert by_id["sc1"].metadata["sidechain"] is True
    assert by_id["sc1"].metadata["agent_id"] == "a1b2c3"
    assert by_id["msg_S06"].metadata["sidechain"] is True
    assert "sidechain" not in by_id["u3"].metadata
    # the same text written on two lines of one API message appears once
    assert by_id["msg_F07"].content == "We changed `-` to `+` in add() (calc.py, line 2)."
    assert session.title == "Fix add() in calc.py"
    assert session.metadata["versions"] == ["1.0.80", "1.0.81"]
    assert session.metadata["version"] == "1.0.81"
    assert session.metadata["git_branch"] == "fix/add"
    assert roles(session) == {"user": 4, "assistant": 8, "tool": 4, "system": 1}


def test_summary_gives_the_title_when_there_is_no_ai_title():
    data = _jsonl(
        {"type": "summary", "summary": "Other branch", "leafUuid": "elsewhere"},
        {"type": "summary", "summary": "Refactor the parser", "leafUuid": "a"},
        {"type": "user", "uuid": "u", "parentUuid": None, "sessionId": "s",
         "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "uuid": "a", "parentUuid": "u", "sessionId": "s",
         "message": {"id": "m", "role": "assistant", "content": [{"type": "text", "text": "yo"}]}},
        {"type": "summary", "summary": "Unrelated later summary", "leafUuid": "zzz"},
    )  # fmt: skip
    [session] = parse_claude_code(data)
    assert session.title == "Refactor the parser"


def test_custom_title_wins_over_ai_title():
    data = _jsonl(
        {"type": "user", "uuid": "u", "parentUuid": None, "sessionId": "s",
         "message": {"role": "user", "content": "hi"}},
        {"type": "ai-title", "aiTitle": "Greeting"},
        {"type": "custom-title", "customTitle": "My own name"},
    )  # fmt: skip
    [session] = parse_claude_code(data)
    assert session.title == "My own name"


def test_thinking_only_message_is_kept_with_empty_content():
    data = _jsonl(
        {"type": "user", "uuid": "u", "parentUuid": None, "sessionId": "s",
         "message": {"role": "user", "content": "think"}},
        {"type": "assistant", "uuid": "a", "parentUuid": "u", "sessionId": "s",
         "message": {"id": "m1", "role": "assistant",
                     "content": [{"type": "thinking", "thinking": "hmm", "signature": "x"}]}},
    )  # fmt: skip
    [session] = parse_claude_code(data)
    assistant = session.messages[1]
    assert (assistant.role, assistant.content, assistant.metadata["thinking"]) == (
        "assistant",
        "",
        "hmm",
    )


def test_user_record_with_image_and_several_tool_results():
    data = _jsonl(
        {"type": "assistant", "uuid": "a", "parentUuid": None, "sessionId": "s",
         "message": {"id": "m", "role": "assistant", "content": [
             {"type": "tool_use", "id": "t1", "name": "Glob", "input": {"pattern": "*.py"}},
             {"type": "tool_use", "id": "t2", "name": "Grep", "input": {"pattern": "TODO"}}]}},
        {"type": "user", "uuid": "r", "parentUuid": "a", "sessionId": "s",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t1", "content": "a.py"},
             {"type": "tool_result", "tool_use_id": "t2", "content": [
                 {"type": "text", "text": "a.py:1: TODO"},
                 {"type": "image", "source": {"type": "base64", "data": "AAA"}}]},
             {"type": "image", "source": {"type": "base64", "data": "AAA"}},
             {"type": "text", "text": "see screenshot"}]}},
    )  # fmt: skip
    [session] = parse_claude_code(data)
    check_invariants(session)
    assert [(m.role, m.client_id, m.tool_name, m.content) for m in session.messages] == [
        ("assistant", "m#t1", "Glob", "pattern: *.py"),
        ("assistant", "m#t2", "Grep", "pattern: TODO"),
        ("tool", "r", "Glob", "a.py"),
        ("tool", "r#1", "Grep", "a.py:1: TODO\n[image]"),
        ("user", "r#2", "", "[image]\nsee screenshot"),
    ]


def test_sidechain_only_file_imports_everything_marked():
    data = _jsonl(
        {"type": "user", "uuid": "u", "parentUuid": None, "isSidechain": True, "sessionId": "s",
         "agentId": "ag1", "message": {"role": "user", "content": "sub task"}},
        {"type": "assistant", "uuid": "a", "parentUuid": "u", "isSidechain": True,
         "sessionId": "s", "agentId": "ag1",
         "message": {"id": "m", "role": "assistant", "content": [{"type": "text", "text": "ok"}]}},
    )  # fmt: skip
    [session] = parse_claude_code(data)
    assert [m.metadata["sidechain"] for m in session.messages] == [True, True]


def test_bookkeeping_only_file_gives_no_session():
    data = _jsonl(
        {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}},
        {"type": "permission-mode", "permissionMode": "default", "sessionId": "s"},
    )
    assert parse_claude_code(data) == []


def test_unicode_line_separator_inside_a_string_is_not_a_line_break():
    text = "first\u2028second \u05e9\u05dc\u05d5\u05dd \U0001f600"
    data = _jsonl(
        {"type": "user", "uuid": "u", "parentUuid": None, "sessionId": "s",
         "message": {"role": "user", "content": text}},
    )  # fmt: skip
    [session] = parse_claude_code(data)
    assert session.messages[0].content == text


@pytest.mark.parametrize(
    ("records", "line", "field", "words"),
    [
        ([{"type": "user", "uuid": "u", "message": "hello"}], 1, "message", "'message' object"),
        (
            [{"type": "user", "uuid": "u", "message": {"role": "user", "content": 42}}],
            1,
            "message.content",
            "'content' must be a string or a list of blocks",
        ),
        (
            [
                {"type": "progress"},
                {"type": "assistant", "uuid": "a", "message": {"content": ["text"]}},
            ],
            2,
            "message.content[0]",
            "must be an object",
        ),
    ],
)
def test_broken_records_are_reported_with_line_and_field(records, line, field, words):
    with pytest.raises(ImportFormatError) as caught:
        parse_claude_code(_jsonl(*records))
    assert caught.value.line == line
    assert caught.value.field == field
    assert words in caught.value.message


def test_invalid_json_line_is_reported():
    good = json.dumps({"type": "user", "uuid": "u", "message": {"content": "x"}})
    data = "\n".join([good, good, "", "{not json"]).encode()
    with pytest.raises(ImportFormatError) as caught:
        parse_claude_code(data)
    assert caught.value.line == 4
    assert str(caught.value).startswith("line 4: invalid JSON")


def test_other_jsonl_is_refused():
    with pytest.raises(ImportFormatError, match="does not look like a Claude Code session"):
        parse_claude_code(b'{"ts": 1, "sender": "user", "text": "hi"}\n')
