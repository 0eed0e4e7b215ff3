"""Staleness from the code: which files a decision or finding is about, which files a
message edits (Edit, Write, apply_patch, aider's SEARCH/REPLACE; not reads), the flag a
later session's edits set (with the session linked, in the API, the page's data and
context), and what clears it (confirm, supersede)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.capture import review
from memories.capture.files import edited_files, files_of, keys
from memories.capture.record import Evidence, MemoryConflict, MemoryDraft, record
from memories.enrich.staleness import flag_stale
from memories.models import Memory
from memories.retrieve.context import line
from sessions.capture.service import capture_session
from sessions.models import Message
from tests.factories import MessageFactory, SessionFactory
from tests.memories.conftest import ALL, token_client
from tests.memories.enrich.test_extraction import extract_everything
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = pytest.mark.django_db

PATCH = "*** Begin Patch\n*** Update File: src/app/pool.py\n@@\n-a\n+b\n*** End Patch"
AIDER = (
    "Here is the change.\n\nweb/views.py\n```python\n<<<<<<< SEARCH\nold\n=======\nnew\n"
    ">>>>>>> REPLACE\n```\n"
)


@pytest.mark.parametrize(
    ("role", "content", "tool", "metadata", "expected"),
    [
        ("assistant", "Edit src/auth/login.py\n-a\n+b", "Edit", {}, ["src/auth/login.py"]),
        (
            "assistant",
            "Write /home/sam/repo/README.md\nhello",
            "Write",
            {},
            ["/home/sam/repo/README.md"],
        ),
        ("assistant", PATCH, "apply_patch", {}, ["src/app/pool.py"]),
        ("assistant", AIDER, "", {}, ["web/views.py"]),
        ("assistant", "Applied edit to web/models.py", "", {}, ["web/models.py"]),
        (
            "assistant",
            "path: a.py",
            "str_replace_based_edit_tool",
            {"input_extra": {"command": "view", "path": "a.py"}},
            [],
        ),
        ("assistant", "old_string: x", "Edit", {"input_extra": {"file_path": "b.py"}}, ["b.py"]),
        ("assistant", "Read src/auth/login.py", "Read", {}, []),
        ("tool", "Edit src/auth/login.py", "Edit", {}, []),
        ("user", "please edit src/auth/login.py", "", {}, []),
    ],
)
def test_the_files_a_message_edits(role, content, tool, metadata, expected):
    assert edited_files(role, content, tool, metadata) == expected


def test_paths_compare_by_their_last_two_parts():
    assert keys(["/home/sam/repo/web/views.py", "./web/views.py", "web/views.py"]) == [
        "web/views.py"
    ]
    assert keys(["views.py"]) == ["views.py"]


def test_a_decision_is_about_the_files_it_names_else_those_its_session_edited(project):
    named = MemoryDraft(type="decision", content="Use a pool in src/app/pool.py for connections")
    assert files_of(named) == ["app/pool.py"]
    session = SessionFactory(project=project)
    MessageFactory(
        session=session, seq=0, role="assistant", tool_name="Edit", content="Edit lib/cache.py\n+x"
    )
    MessageFactory(
        session=session, seq=1, role="assistant", tool_name="Read", content="Read lib/other.py"
    )
    said = MessageFactory(
        session=session, seq=2, role="assistant", content="We keep entries for an hour."
    )
    MessageFactory(
        session=session, seq=3, role="assistant", tool_name="Edit", content="Edit lib/later.py\n+x"
    )
    unnamed = MemoryDraft(
        type="decision",
        content="Keep entries for an hour",
        session=session,
        evidence=[Evidence(said)],
    )
    assert files_of(unnamed) == ["lib/cache.py"]
    assert files_of(MemoryDraft(type="preference", content="Tabs in src/app/pool.py")) == []


def later_edit(project, path: str, *, minutes: int = 5):
    session = SessionFactory(project=project)
    when = timezone.now() + timedelta(minutes=minutes)
    MessageFactory(session=session, seq=0, role="user", content="Tidy it up", timestamp=when)
    MessageFactory(
        session=session,
        seq=1,
        role="assistant",
        tool_name="Edit",
        content=f"Edit {path}\n-a\n+b",
        timestamp=when,
    )
    return session, list(Message.objects.filter(session=session).order_by("seq"))


def test_a_later_sessions_edit_flags_the_memory_and_confirm_clears_it(project):
    decision = record(
        project, MemoryDraft(type="decision", content="Open one pool per worker in src/app/pool.py")
    ).memory
    other = record(
        project, MemoryDraft(type="finding", content="docs/setup.md is out of date")
    ).memory
    later, messages = later_edit(project, "/home/sam/repo/src/app/pool.py")
    assert flag_stale(later, messages) == 1
    decision.refresh_from_db()
    other.refresh_from_db()
    assert decision.stale_session == later and decision.stale_since is not None
    assert other.stale_since is None
    assert "(may be stale: a later session edited its files)" in line(decision)
    assert decision.history.last().to_status == "stale"
    assert flag_stale(later, messages) == 0  # flagged once
    agent = token_client(project, *ALL)
    body = agent.get(f"/api/v1/memories/{decision.public_id}").json()
    assert body["stale"]["session"] == later.public_id
    assert body["files"] == ["app/pool.py"]
    confirmed = agent.post(
        f"/api/v1/memories/{decision.public_id}/confirm", {"reason": "still true"}, format="json"
    )
    assert confirmed.status_code == 200 and confirmed.json()["stale"] is None
    assert agent.post(f"/api/v1/memories/{decision.public_id}/confirm").status_code == 409
    with pytest.raises(MemoryConflict):
        review.confirm(other)


def test_its_own_session_and_memories_said_after_the_edit_are_not_flagged(project):
    later, messages = later_edit(project, "src/app/pool.py", minutes=-60)
    mine = record(
        project,
        MemoryDraft(type="decision", content="Pool per worker in src/app/pool.py", session=later),
    ).memory
    newer = record(
        project, MemoryDraft(type="finding", content="src/app/pool.py leaks on fork")
    ).memory
    assert flag_stale(later, messages) == 0
    assert Memory.objects.filter(pk__in=[mine.pk, newer.pk], stale_since__isnull=False).count() == 0


def test_superseding_clears_the_flag(project):
    old = record(
        project,
        MemoryDraft(type="decision", content="Use src/app/pool.py with 5 slots", topic="pool"),
    ).memory
    later, messages = later_edit(project, "src/app/pool.py")
    flag_stale(later, messages)
    record(
        project,
        MemoryDraft(type="decision", content="Drop the pool and connect per request", topic="pool"),
    )
    old.refresh_from_db()
    assert (old.status, old.stale_since, old.stale_session) == ("superseded", None, None)


def test_the_extraction_worker_flags_what_a_captured_session_edits(
    project, django_capture_on_commit_callbacks
):
    decision = record(
        project, MemoryDraft(type="decision", content="Keep retries in src/net/retry.py at three")
    ).memory
    parsed = ParsedSession(
        source_format="api",
        agent_name="coder",
        messages=[
            ParsedMessage(role="user", content="Make retries configurable"),
            ParsedMessage(
                role="assistant",
                content="Edit src/net/retry.py\n-RETRIES = 3\n+RETRIES = env()",
                tool_name="Edit",
                tool_call_id="e1",
            ),
            ParsedMessage(role="tool", content="ok", tool_name="Edit", tool_call_id="e1"),
        ],
    )
    session = capture_session(project, parsed).session
    extract_everything(session, django_capture_on_commit_callbacks)
    decision.refresh_from_db()
    assert decision.stale_session_id == session.pk
