from datetime import UTC, datetime

import pytest

from transcripts.base import ImportFormatError
from transcripts.formats.conversation_md import parse_conversation_md

from .helpers import check_invariants, fixture


def test_fixture_conversation():
    [session] = parse_conversation_md(fixture("conversation.md"))
    check_invariants(session)
    assert session.external_id == "session-2026-01-11-abc123"
    assert session.started_at == datetime(2026, 1, 11, 14, 30, tzinfo=UTC)
    assert session.ended_at == datetime(2026, 1, 11, 14, 35, tzinfo=UTC)
    assert session.agent_name == "bmad-master"
    assert session.user_name == "user-123"
    assert session.metadata == {
        "participants": ["user-123", "bmad-master", "veritas", "architect"],
        "agents": ["bmad-master", "veritas", "architect"],
    }
    assert [(m.client_id, m.role, m.author) for m in session.messages] == [
        ("turn-1", "user", "user"),
        ("turn-2", "assistant", "bmad-master"),
        ("turn-3", "assistant", "veritas"),
        ("turn-4", "assistant", "architect"),
        ("turn-5", "tool", "search_docs"),
        ("turn-6", "user", "user"),
    ]
    opening, plan, review, call, result, reply = session.messages
    assert opening.content == (
        "Let's review the authentication requirements for the e-commerce platform."
    )
    assert opening.metadata == {"type": "message"}
    assert plan.metadata["memory_refs"] == ["DEC-001"]
    assert plan.metadata["memory_stored"] == ["Decision to use multi-agent review [DEC-001]"]
    assert "Memory Stored" not in plan.content
    # a "---" inside a turn is content; the one closing the turn is not
    assert review.content.endswith("vague\n\n---\n\nSection 3.3 looks fine. 👍")
    assert review.metadata["memory_refs"] == ["FIND-001", "FIND-002"]
    assert len(review.metadata["memory_stored"]) == 2
    assert (call.tool_name, call.tool_call_id, call.content) == (
        "search_docs",
        "turn-4",
        'query: "session timeout policy"',
    )
    assert (result.tool_name, result.tool_call_id) == ("search_docs", "turn-4")
    assert result.timestamp == datetime(2026, 1, 11, 14, 31, 12, tzinfo=UTC)
    # a "## Turn" line not followed by "**Speaker:**" is text, and the closing HTML comment
    # is not content
    assert reply.content == (
        "Good catches. MFA should be required for all admin users but optional for customers.\n"
        "## Turn 99 - this heading is quoted by the user, not a turn"
    )
    assert reply.metadata["memory_stored"] == ["Preference: MFA policy clarification [PREF-001]"]


def test_crlf_file_and_system_speaker():
    text = (
        "# Conversation History\r\n**Session:** s-1\r\n\r\n---\r\n\r\n"
        "## Turn 1 - 2026-02-01T08:00:00+01:00\r\n**Speaker:** system\r\n**Type:** message\r\n"
        "\r\nSession resumed.\r\n\r\n---\r\n"
    )
    [session] = parse_conversation_md(text.encode())
    [message] = session.messages
    assert (message.role, message.content) == ("system", "Session resumed.")
    assert message.timestamp == datetime(2026, 2, 1, 7, 0, tzinfo=UTC)


def test_bad_turn_time_names_the_line():
    text = "## Turn 1 - yesterday noon\n**Speaker:** user\n\nhi\n"
    with pytest.raises(ImportFormatError) as caught:
        parse_conversation_md(text.encode())
    assert caught.value.line == 1
    assert "yesterday noon" in caught.value.message


def test_markdown_without_turns_is_refused():
    with pytest.raises(ImportFormatError, match="no '## Turn <n> - <time>' heading"):
        parse_conversation_md(b"# Notes\n\nNothing here.\n")
