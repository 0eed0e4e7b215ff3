"""sessions.portable.session_export on unsaved model instances (no database: a query would
fail the test)."""

import json
import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
import yaml

from sessions.models import Message, Session
from sessions.portable.session_export import FORMATS, export_session, iter_export
from teams.models import Project
from transcripts.formats.conversation_md import parse_conversation_md

PLUS_TWO = timezone(timedelta(hours=2))
ARABIC = "مرحبا بالعالم"
HEBREW = "שלום עולם"


def make_session(**overrides) -> Session:
    fields = {
        "public_id": "2026-01-11-architect-a7b3c9",
        "external_id": "ext-42",
        "agent_name": "architect",
        "agent_persona": "Winston",
        "workflow": "create-architecture",
        "title": "Auth review 🔐",
        "user_name": "alice",
        "source_format": "claude_code",
        "status": "completed",
        "lifecycle": "active",
        "started_at": datetime(2026, 1, 11, 16, 30, tzinfo=PLUS_TWO),
        "ended_at": datetime(2026, 1, 11, 15, 0, 0, 250000, tzinfo=UTC),
        "message_count": 4,
        "size_bytes": 1234,
        "topics": ["oauth", "security"],
        "artifacts": ["docs/architecture.md"],
        "metadata": {"project_phase": "requirements", "tags": ["a", "b"], "n": 1.5},
        "summary": "Reviewed auth.\nMFA required for admins.",
    }
    fields.update(overrides)
    return Session(**fields)


def make_messages() -> list[Message]:
    return [
        Message(
            seq=0,
            role="user",
            author="alice",
            content=f"Review the auth requirements 😀\n{ARABIC}\n{HEBREW}",
            timestamp=datetime(2026, 1, 11, 16, 30, tzinfo=PLUS_TWO),
            token_count=12,
        ),
        Message(
            seq=1,
            role="assistant",
            author="architect",
            content='{"command": "grep -rn MFA docs/"}',
            tool_name="bash",
            tool_call_id="toolu_01",
            timestamp=datetime(2026, 1, 11, 14, 30, 5, tzinfo=UTC),
            metadata={"model": "claude-sonnet"},
        ),
        Message(
            seq=2,
            role="tool",
            content="docs/auth.md:12: MFA: TBD\n",
            tool_name="bash",
            tool_call_id="toolu_01",
            timestamp=datetime(2026, 1, 11, 14, 30, 6, tzinfo=UTC),
        ),
        Message(
            seq=3,
            role="assistant",
            author="architect",
            content="**Finding:** no MFA.\n\n---\n\n## Not a turn\n\n```\ncode\n```",
            timestamp=datetime(2026, 1, 11, 14, 31, tzinfo=UTC),
            metadata={"memory_refs": ["FIND-001"], "memory_stored": ["Missing MFA [FIND-001]"]},
        ),
    ]


EXPECTED_SESSION = {
    "id": "2026-01-11-architect-a7b3c9",
    "external_id": "ext-42",
    "project": None,
    "agent_name": "architect",
    "agent_persona": "Winston",
    "workflow": "create-architecture",
    "title": "Auth review 🔐",
    "user_name": "alice",
    "source_format": "claude_code",
    "status": "completed",
    "lifecycle": "active",
    "started_at": "2026-01-11T14:30:00Z",
    "ended_at": "2026-01-11T15:00:00.250000Z",
    "message_count": 4,
    "size_bytes": 1234,
    "topics": ["oauth", "security"],
    "artifacts": ["docs/architecture.md"],
    "metadata": {"project_phase": "requirements", "tags": ["a", "b"], "n": 1.5},
    "summary": "Reviewed auth.\nMFA required for admins.",
}


def _message(seq, role, author, content, tool_name, tool_call_id, timestamp, tokens, meta):
    return {
        "seq": seq,
        "role": role,
        "author": author,
        "content": content,
        "tool_name": tool_name,
        "tool_call_id": tool_call_id,
        "timestamp": timestamp,
        "token_count": tokens,
        "metadata": meta,
        "client_id": "",
        "kind": "",
        "pinned": False,
    }


EXPECTED_MESSAGES = [
    _message(
        0,
        "user",
        "alice",
        f"Review the auth requirements 😀\n{ARABIC}\n{HEBREW}",
        "",
        "",
        "2026-01-11T14:30:00Z",
        12,
        {},
    ),
    _message(
        1,
        "assistant",
        "architect",
        '{"command": "grep -rn MFA docs/"}',
        "bash",
        "toolu_01",
        "2026-01-11T14:30:05Z",
        0,
        {"model": "claude-sonnet"},
    ),
    _message(
        2,
        "tool",
        "",
        "docs/auth.md:12: MFA: TBD\n",
        "bash",
        "toolu_01",
        "2026-01-11T14:30:06Z",
        0,
        {},
    ),
    _message(
        3,
        "assistant",
        "architect",
        "**Finding:** no MFA.\n\n---\n\n## Not a turn\n\n```\ncode\n```",
        "",
        "",
        "2026-01-11T14:31:00Z",
        0,
        {"memory_refs": ["FIND-001"], "memory_stored": ["Missing MFA [FIND-001]"]},
    ),
]


# --- json -----------------------------------------------------------------------------------


def test_json_structure_is_exact():
    body, content_type, extension = export_session(make_session(), make_messages(), "json")
    assert (content_type, extension) == ("application/json", "json")
    data = json.loads(body)
    assert list(data) == ["session", "messages"]
    assert data["session"] == EXPECTED_SESSION
    assert list(data["session"]) == list(EXPECTED_SESSION)  # stable field order
    assert data["messages"] == EXPECTED_MESSAGES


def test_json_is_pretty_utf8_and_identical_to_json_dumps():
    body, _, _ = export_session(make_session(), make_messages(), "json")
    expected = {"session": EXPECTED_SESSION, "messages": EXPECTED_MESSAGES}
    assert body == (json.dumps(expected, indent=2, ensure_ascii=False) + "\n").encode()
    # Real UTF-8 bytes, not \u escapes.
    assert "😀".encode() in body and ARABIC.encode() in body and HEBREW.encode() in body
    assert b"\\u" not in body


def test_attachments_follow_the_messages_in_every_text_format():
    memories = {"decisions": [{"id": "DEC-001", "decision": "Use MFA\nfor admins"}]}
    session, messages = make_session(), make_messages()
    body = export_session(session, messages, "json", {"memories": memories})[0]
    expected = {"session": EXPECTED_SESSION, "messages": EXPECTED_MESSAGES, "memories": memories}
    assert body == (json.dumps(expected, indent=2, ensure_ascii=False) + "\n").encode()
    assert yaml.safe_load(export_session(session, messages, "yaml", {"memories": memories})[0]) == (
        json.loads(body)
    )
    last = export_session(session, messages, "jsonl", {"memories": memories})[0].splitlines()[-1]
    assert json.loads(last) == {"type": "attachment", "name": "memories", "data": memories}
    markdown = export_session(session, messages, "markdown", {"memories": memories})[0]
    assert parse_conversation_md(markdown)[0].attachments == {"memories": memories}


def test_json_tool_call_and_result_share_their_id():
    data = json.loads(export_session(make_session(), make_messages(), "json")[0])
    call, result = data["messages"][1], data["messages"][2]
    assert (call["role"], result["role"]) == ("assistant", "tool")
    assert call["tool_call_id"] == result["tool_call_id"] == "toolu_01"
    assert call["tool_name"] == result["tool_name"] == "bash"


def test_json_without_messages():
    body, _, _ = export_session(make_session(), [], "json")
    assert json.loads(body) == {"session": EXPECTED_SESSION, "messages": []}
    assert body.endswith(b'"messages": []\n}\n')


def test_naive_times_are_utc_and_missing_times_are_null():
    session = make_session(started_at=datetime(2026, 1, 11, 14, 30), ended_at=None)
    message = Message(seq=0, role="user", content="hi", timestamp=None)
    data = json.loads(export_session(session, [message], "json")[0])
    assert data["session"]["started_at"] == "2026-01-11T14:30:00Z"
    assert data["session"]["ended_at"] is None
    assert data["messages"][0]["timestamp"] is None


def test_project_slug_only_when_loaded_and_never_queried():
    with_project = make_session(project=Project(name="Web Shop", slug="web-shop"))
    assert json.loads(export_session(with_project, [], "json")[0])["session"]["project"] == (
        "web-shop"
    )
    # A project id without the instance: reading session.project would query the database,
    # which pytest-django forbids here (no db fixture), so this also proves there is no query.
    only_id = make_session(project_id=987654)
    assert json.loads(export_session(only_id, [], "json")[0])["session"]["project"] is None


# --- jsonl ----------------------------------------------------------------------------------


def test_jsonl_one_session_line_then_one_line_per_message():
    body, content_type, extension = export_session(make_session(), make_messages(), "jsonl")
    assert (content_type, extension) == ("application/x-ndjson", "jsonl")
    assert body.endswith(b"\n")
    lines = body.decode().split("\n")[:-1]
    assert len(lines) == 1 + 4
    records = [json.loads(line) for line in lines]
    assert records[0] == {"type": "session", **EXPECTED_SESSION}
    assert list(records[0])[:2] == ["type", "id"]
    assert records[1:] == [{"type": "message", **m} for m in EXPECTED_MESSAGES]
    assert "😀" in lines[1] and ARABIC in lines[1]


def test_jsonl_escapes_characters_that_line_readers_split_on():
    content = "a\u2028b\u2029c\x85d\ne"
    body, _, _ = export_session(
        make_session(), [Message(seq=0, role="user", content=content)], "jsonl"
    )
    text = body.decode()
    assert len(text.splitlines()) == 2  # str.splitlines splits on all of them
    assert json.loads(text.splitlines()[1])["content"] == content


# --- yaml -----------------------------------------------------------------------------------


def test_yaml_parses_back_to_the_json_structure():
    body, content_type, extension = export_session(make_session(), make_messages(), "yaml")
    assert (content_type, extension) == ("application/yaml; charset=utf-8", "yaml")
    json_body = export_session(make_session(), make_messages(), "json")[0]
    assert yaml.safe_load(body) == json.loads(json_body)
    text = body.decode()
    assert text.startswith("session:\n  id: 2026-01-11-architect-a7b3c9\n")
    # Order kept (sort_keys=False), unicode unescaped, times stay strings.
    assert text.index("external_id:") < text.index("agent_name:") < text.index("summary:")
    assert f"    {ARABIC}\n    {HEBREW}\n" in text
    assert "started_at: '2026-01-11T14:30:00Z'" in text


def test_yaml_writes_multiline_strings_as_literal_blocks():
    text = export_session(make_session(), make_messages(), "yaml")[0].decode()
    assert "  summary: |-\n    Reviewed auth.\n    MFA required for admins.\n" in text
    assert "  content: |\n    docs/auth.md:12: MFA: TBD\n" in text
    assert '  content: \'{"command": "grep -rn MFA docs/"}\'\n' in text  # one line: inline


TRICKY = [
    "ends with blank lines\n\n\n",
    "\n",
    "  leading spaces\nsecond",
    "trailing spaces  \nsecond",
    "tab\tinside\nsecond",
    "windows\r\nline endings",
    # PyYAML writes these raw in "|" and '...' scalars, where they read back as breaks.
    "next\x85line\nsecond",
    "next\x85line, one line",
    "line\u2028separator\nsecond",
    "line\u2028separator, one line",
    "para\u2029graph\nsecond",
    "---\n...\n",
    "key: value\n- item\n# comment",
    "null\ntrue",
    "😀\nمرحبا\nשלום",
    "NUL-free but \x07 bell\nsecond",
    "long " * 400,
    ("a long line " * 60).strip() + "\nnext",
]


@pytest.mark.parametrize("content", TRICKY)
def test_yaml_round_trips_tricky_content(content):
    messages = [
        Message(seq=0, role="user", content=content),
        Message(seq=1, role="assistant", content=content, metadata={"note": content}),
    ]
    session = make_session(summary=content)
    body, _, _ = export_session(session, messages, "yaml")
    data = yaml.safe_load(body)
    assert data["session"]["summary"] == content
    assert [m["content"] for m in data["messages"]] == [content, content]
    assert data["messages"][1]["metadata"] == {"note": content}


def test_yaml_without_messages():
    body, _, _ = export_session(make_session(), [], "yaml")
    assert body.endswith(b"messages: []\n")
    assert yaml.safe_load(body)["messages"] == []


# --- markdown -------------------------------------------------------------------------------

EXPECTED_MARKDOWN = f"""# Conversation History
**Session:** 2026-01-11-architect-a7b3c9
**Started:** 2026-01-11 14:30:00 UTC
**Participants:** alice, architect
**Title:** Auth review 🔐
**Agent:** architect
**Persona:** Winston
**Workflow:** create-architecture
**Ended:** 2026-01-11 15:00:00 UTC
**Topics:** oauth, security
**Summary:** Reviewed auth. MFA required for admins.

---

## Turn 1 - 2026-01-11 14:30:00
**Speaker:** user
**Type:** message

Review the auth requirements 😀
{ARABIC}
{HEBREW}

---

## Turn 2 - 2026-01-11 14:30:05
**Speaker:** architect
**Type:** tool_call
**Tool:** bash
**Tool-Call-Id:** toolu_01

{{"command": "grep -rn MFA docs/"}}

---

## Turn 3 - 2026-01-11 14:30:06
**Speaker:** bash
**Type:** tool_result
**Tool:** bash
**Tool-Call-Id:** toolu_01

docs/auth.md:12: MFA: TBD


---

## Turn 4 - 2026-01-11 14:31:00
**Speaker:** architect
**Type:** message
**Memory-Refs:** [FIND-001]

**Finding:** no MFA.

---

## Not a turn

```
code
```

**Memory Stored:**
- Missing MFA [FIND-001]

---

"""


def readable(body: bytes) -> bytes:
    """The Markdown without our exact-data comments: what a person (or another reader) sees."""
    return re.sub(rb"\n{1,2}<!-- memoryapp:[^\n]*-->", b"", body)


def test_markdown_is_seed_conversation_md():
    body, content_type, extension = export_session(make_session(), make_messages(), "markdown")
    assert (content_type, extension) == ("text/markdown; charset=utf-8", "md")
    assert readable(body).decode() == EXPECTED_MARKDOWN
    # One comment under the header, one per turn: renderers hide them.
    assert body.count(b"\n<!-- memoryapp:session {") == 1
    assert body.count(b"\n<!-- memoryapp:message {") == 4


def test_markdown_reads_back_exactly_with_its_comments():
    session, messages = make_session(), make_messages()
    [parsed] = parse_conversation_md(export_session(session, messages, "markdown")[0])
    assert parsed.external_id == "ext-42"
    assert parsed.metadata == session.metadata
    assert [m.content for m in parsed.messages] == [m.content for m in messages]
    assert [m.author for m in parsed.messages] == [m.author for m in messages]
    assert [m.metadata for m in parsed.messages] == [m.metadata for m in messages]
    assert [m.tool_call_id for m in parsed.messages] == ["", "toolu_01", "toolu_01", ""]


def test_markdown_turns_are_numbered_from_one_in_order():
    messages = [Message(seq=10 + i, role="user", content=f"m{i}") for i in range(12)]
    text = export_session(make_session(), messages, "markdown")[0].decode()
    headings = [line for line in text.split("\n") if line.startswith("## Turn")]
    assert headings == [f"## Turn {n}" for n in range(1, 13)]  # no timestamps: no " - time"
    assert text.index("m0") < text.index("m11")


def test_markdown_header_omits_empty_fields():
    session = make_session(
        agent_persona="", workflow="none", title="", topics=[], summary="", ended_at=None
    )
    text = readable(export_session(session, [], "markdown")[0]).decode()
    assert text == (
        "# Conversation History\n"
        "**Session:** 2026-01-11-architect-a7b3c9\n"
        "**Started:** 2026-01-11 14:30:00 UTC\n"
        "**Participants:** alice, architect\n"
        "**Agent:** architect\n"
        "\n---\n\n"
    )


def test_markdown_round_trips_through_the_conversation_md_importer():
    session, messages = make_session(), make_messages()
    body, _, _ = export_session(session, messages, "markdown")
    [parsed] = parse_conversation_md(readable(body))  # as any conversation.md reader sees it
    assert parsed.external_id == session.public_id
    assert parsed.title == session.title
    assert parsed.agent_name == "architect"
    assert parsed.user_name == "alice"
    assert parsed.started_at == session.started_at
    assert [m.role for m in parsed.messages] == [m.role for m in messages]
    assert [m.timestamp for m in parsed.messages] == [m.timestamp for m in messages]
    # Content verbatim (the importer drops blank lines at the ends of a turn).
    assert [m.content for m in parsed.messages] == [m.content.strip("\n") for m in messages]
    assert [m.author for m in parsed.messages][1::2] == ["architect", "architect"]
    call, result = parsed.messages[1], parsed.messages[2]
    assert call.tool_name == result.tool_name == "bash"
    # The importer links a result to its call by position and keeps the original id.
    assert call.tool_call_id and call.tool_call_id == result.tool_call_id
    assert call.metadata["tool_call_id"] == result.metadata["tool_call_id"] == "toolu_01"
    assert parsed.messages[3].metadata["memory_refs"] == ["FIND-001"]
    assert parsed.messages[3].metadata["memory_stored"] == ["Missing MFA [FIND-001]"]


def test_markdown_round_trip_without_authors_uses_the_agent_name():
    session = make_session(user_name="", agent_name="dev")
    messages = [
        Message(seq=0, role="user", content="hello"),
        Message(seq=1, role="assistant", content="hi"),
        Message(seq=2, role="system", content="note"),
    ]
    [parsed] = parse_conversation_md(readable(export_session(session, messages, "markdown")[0]))
    assert [(m.role, m.author, m.content) for m in parsed.messages] == [
        ("user", "user", "hello"),
        ("assistant", "dev", "hi"),
        ("system", "system", "note"),
    ]
    assert parsed.agent_name == "dev"


# --- streaming and formats ------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_iter_export_streams_the_same_bytes_one_message_at_a_time(fmt):
    taken = []

    def messages():
        for message in make_messages():
            taken.append(message.seq)
            yield message

    chunks = iter_export(make_session(), messages(), fmt)
    first = next(chunks)
    assert taken == []  # the header is written before any message is read
    rest = list(chunks)
    assert taken == [0, 1, 2, 3]  # the iterable is read once
    assert len(rest) >= 4
    assert all(isinstance(chunk, bytes) for chunk in rest)
    assert first + b"".join(rest) == export_session(make_session(), make_messages(), fmt)[0]


def test_large_session_streams_in_small_chunks():
    count = 20_000

    def messages():
        for seq in range(count):
            yield Message(seq=seq, role="user" if seq % 2 else "assistant", content=f"m {seq}")

    sizes = []
    lines = 0
    for chunk in iter_export(make_session(), messages(), "jsonl"):
        sizes.append(len(chunk))
        lines += chunk.count(b"\n")
    assert lines == count + 1
    assert max(sizes) < 2_000  # never the whole body at once


@pytest.mark.parametrize("fmt", ["xml", "csv", "JSON", "md", "", "yml"])
def test_unsupported_format_is_refused_at_once(fmt):
    with pytest.raises(ValueError, match="json, jsonl, markdown, yaml"):
        export_session(make_session(), [], fmt)
    with pytest.raises(ValueError, match="supported formats"):
        iter_export(make_session(), [], fmt)  # not only when first read
