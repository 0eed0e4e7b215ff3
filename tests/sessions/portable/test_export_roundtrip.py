"""Every export format of a session imports back to an equal session: a property over
generated sessions (unicode, empty content, tool calls, odd metadata, pins), exported
through the API and imported through the import API into another project, on real
PostgreSQL."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from memories.capture.record import Evidence, MemoryDraft, link, record
from memories.models import Memory, MemoryLink
from sessions.capture.service import capture_session
from sessions.models import Message, Session
from sessions.portable.session_export import FORMATS
from teams.models import Role
from tests.factories import MembershipFactory, ProjectFactory, TeamFactory
from transcripts import detect_format
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = pytest.mark.django_db
VECTOR = np.ones(384, dtype=np.float32) / np.sqrt(384)

# What import detects each export as.
DETECTED = {
    "json": "memoryapp",
    "jsonl": "memoryapp",
    "yaml": "memoryapp",
    "markdown": "conversation_md",
    "anthropic_session": "anthropic_session",
}

word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-", min_size=1, max_size=12)
# Any text PostgreSQL can store (no NUL, no lone surrogates), with the characters writers
# treat specially: line separators, CR, tabs, Markdown turn headings, separators, comments.
tricky = st.sampled_from(
    [
        "",
        " ",
        "\n",
        "---",
        "line\u2028break\u2029\x85",
        "## Turn 7 - 2025-01-01 00:00:00\n**Speaker:** user\n\nhi",
        "**Memory Stored:**\n- x",
        "<!-- memoryapp:message {} -->",
        "  indented\r\nwindows\t",
        "emoji 🔐 مرحبا שלום",
        'key: "value" # yaml?',
        "null",
        "- a\n- b",
    ]
)
free_text = st.text(
    st.characters(codec="utf-8", exclude_characters="\x00", exclude_categories=["Cs"]),
    max_size=60,
)
content = st.one_of(free_text, tricky, st.lists(tricky, max_size=3).map("\n".join))
one_line = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs", "Cc", "Zl", "Zp"]), max_size=30
).map(str.strip)
moment = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2090, 1, 1), timezones=st.just(UTC)
)
json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    free_text,
    tricky,
)
metadata = st.dictionaries(
    st.one_of(word, tricky.filter(bool)),
    st.recursive(
        json_leaf,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(word, inner, max_size=3),
        max_leaves=6,
    ),
    max_size=4,
)


@st.composite
def messages(draw) -> list[ParsedMessage]:
    out = []
    for n in range(draw(st.integers(0, 6))):
        role = draw(st.sampled_from(["user", "assistant", "system", "tool", "assistant"]))
        tool = role == "tool" or (role == "assistant" and draw(st.booleans()))
        call_id = f"toolu_{n}" if tool else ""
        out.append(
            ParsedMessage(
                role=role,
                content=draw(content),
                author=draw(st.just("") | word),
                timestamp=draw(st.none() | moment),
                tool_name=draw(word) if tool else "",
                tool_call_id=call_id,
                client_id=draw(st.just("") | st.just(f"c{n}")),
                metadata=draw(metadata),
                pinned=draw(st.booleans()),
            )
        )
    return out


@st.composite
def sessions(draw) -> ParsedSession:
    started = draw(moment)
    return ParsedSession(
        source_format=draw(st.sampled_from(["api", "claude_code", "codex"])),
        messages=draw(messages()),
        external_id=draw(st.just("") | word),
        title=draw(one_line),
        agent_name=draw(word),
        agent_persona=draw(one_line),
        workflow=draw(st.just("") | word),
        user_name=draw(one_line),
        status=draw(st.sampled_from(["completed", "interrupted", "error", "active"])),
        started_at=started,
        ended_at=draw(st.none() | st.just(started)),
        topics=draw(st.lists(word, max_size=3, unique=True)),
        artifacts=draw(st.lists(word, max_size=2, unique=True)),
        metadata=draw(metadata),
    )


def comparable(session: Session) -> dict[str, Any]:
    """What must survive the round trip: everything but ids, counters and derived values."""
    fields = [
        "agent_name",
        "agent_persona",
        "workflow",
        "title",
        "user_name",
        "source_format",
        "status",
        "started_at",
        "ended_at",
        "topics",
        "artifacts",
        "metadata",
    ]
    messages = [
        {
            name: getattr(m, name)
            for name in [
                "role",
                "author",
                "content",
                "tool_name",
                "tool_call_id",
                "timestamp",
                "metadata",
                "kind",
                "pinned",
            ]
        }
        for m in Message.objects.filter(session=session).order_by("seq")
    ]
    return {**{name: getattr(session, name) for name in fields}, "messages": messages}


@pytest.fixture
def setup():
    team = TeamFactory()
    source, target = ProjectFactory(team=team), ProjectFactory(team=team)
    user = MembershipFactory(team=team, role=Role.ADMIN).user
    client = APIClient()
    client.force_authenticate(user)
    return source, target, client


def export(client: APIClient, session: Session, fmt: str) -> bytes:
    response = client.get(f"/api/v1/sessions/{session.public_id}/export", {"format": fmt})
    assert response.status_code == 200, response.content
    return b"".join(response.streaming_content)


def import_(client: APIClient, project, body: bytes, filename: str) -> dict:
    response = client.post(
        f"/api/v1/import?project={project.pk}&filename={filename}",
        body,
        content_type="application/octet-stream",
    )
    assert response.status_code == 201, response.content
    return response.json()


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(parsed=sessions())
def test_every_export_format_imports_back_to_an_equal_session(setup, fmt, parsed):
    source, target, client = setup
    original = capture_session(source, parsed).session
    body = export(client, original, fmt)
    extension = FORMATS[fmt][1]
    assert detect_format(body, f"x.{extension}") == DETECTED[fmt]
    answer = import_(client, target, body, f"x.{extension}")
    copy = Session.objects.get(project=target, public_id=answer["sessions"][0]["id"])
    original.refresh_from_db()  # as stored: JSON numbers come back as PostgreSQL keeps them
    assert comparable(copy) == comparable(original)
    # The same export again changes nothing: found by its id, every message a duplicate.
    again = import_(client, target, body, f"x.{extension}")["sessions"][0]
    assert again["id"] == copy.public_id
    assert again["messages_added"] == 0
    assert Message.objects.filter(session=copy).count() == len(parsed.messages)
    Session.objects.filter(pk__in=[original.pk, copy.pk]).delete()


def memories_of(session: Session) -> tuple[list, set]:
    """A session's memories as the round trip must keep them: id, type, statement, details,
    tags, and the seqs of their evidence; and the links among them."""
    memories = [
        (
            m.public_id,
            m.type,
            m.content,
            m.details,
            m.tags,
            sorted(m.evidence.filter(session=session).values_list("message__seq", flat=True)),
        )
        for m in Memory.objects.filter(session=session).order_by("public_id")
    ]
    links = set(
        MemoryLink.objects.filter(source__session=session).values_list(
            "source__public_id", "kind", "target__public_id"
        )
    )
    return memories, links


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_sessions_memories_travel_with_it_in_every_format(setup, fmt):
    source, target, client = setup
    parsed = ParsedSession(
        source_format="api",
        agent_name="architect",
        messages=[
            ParsedMessage("user", "Should admins need MFA?"),
            ParsedMessage("assistant", "Yes: we decided MFA for admins."),
            ParsedMessage("user", "And the staging server is missing TLS."),
        ],
    )
    original = capture_session(source, parsed).session
    turns = list(Message.objects.filter(session=original).order_by("seq"))
    decision = record(
        source,
        MemoryDraft(
            type="decision",
            content="MFA is required for admins",
            session=original,
            details={"rationale": "audit finding"},
            tags=["security"],
            evidence=[Evidence(turns[1])],
            embedding=VECTOR,
            reconcile=False,
        ),
    ).memory
    finding = record(
        source,
        MemoryDraft(
            type="finding",
            content="Staging has no TLS",
            session=original,
            evidence=[Evidence(turns[2])],
            embedding=VECTOR,
            reconcile=False,
        ),
    ).memory
    link(finding, decision, "relates_to")

    body = export(client, original, fmt)
    answer = import_(client, target, body, f"x.{FORMATS[fmt][1]}")["sessions"][0]
    assert answer["attachments"]["memories"]["created"] == 2
    copy = Session.objects.get(project=target, public_id=answer["id"])
    assert memories_of(copy) == memories_of(original)
    # Again: nothing new, and no memory twice.
    again = import_(client, target, body, f"x.{FORMATS[fmt][1]}")["sessions"][0]
    assert again["attachments"]["memories"] == {"created": 0, "unchanged": 2, "renumbered": {}}
    assert Memory.objects.filter(project=target).count() == 2


def test_an_export_with_a_section_this_instance_does_not_know_still_imports(setup):
    source, target, client = setup
    original = capture_session(
        source, ParsedSession("api", [ParsedMessage("user", "hi")], agent_name="a")
    ).session
    document = json.loads(export(client, original, "json"))
    document["diaries"] = [{"day": "2026-01-01", "text": "from a newer instance"}]
    answer = import_(client, target, json.dumps(document).encode(), "x.json")["sessions"][0]
    assert answer["attachments"] == {"skipped_sections": ["diaries"]}
    assert answer["messages_added"] == 1


def test_bad_memories_in_an_export_leave_nothing_written(setup):
    source, target, client = setup
    original = capture_session(
        source, ParsedSession("api", [ParsedMessage("user", "hi")], agent_name="a")
    ).session
    document = json.loads(export(client, original, "json"))
    document["memories"] = {"decisions": [{"id": "DEC-001", "decision": "x", "colour": "red"}]}
    response = client.post(
        f"/api/v1/import?project={target.pk}&filename=x.json",
        json.dumps(document).encode(),
        content_type="application/octet-stream",
    )
    assert response.status_code == 400
    assert response.json()["field"] == "colour"
    assert "decisions[0] (DEC-001)" in response.json()["detail"]
    assert not Session.objects.filter(project=target).exists()
