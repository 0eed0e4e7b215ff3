"""Extraction in the enrichment pipeline (in this process, with the real model and real
PostgreSQL): memories linked to their messages, incremental, idempotent, failures recorded
and retried, the LLM endpoint and its fallback, removal of a message, and consistency
(restated decisions merge, changed preferences and reversed decisions supersede)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.enrich import offline, run
from memories.models import (
    LinkKind,
    Memory,
    MemoryEvidence,
    MemoryExtraction,
    MemoryLink,
    MemoryStatus,
)
from sessions.capture.service import append_messages, capture_session
from sessions.enrich import pipeline
from sessions.models import Message, Session
from teams.models import Role
from tests.clients import client_for
from tests.factories import MembershipFactory
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = pytest.mark.django_db

TASK = "The login page times out for some users. Please never add new dependencies without asking."
FOUND = (
    "The problem was that src/auth/login.py opens a new database connection per request. "
    "We decided to use a connection pool instead of per-request connections because the "
    "database allows only 20 connections."
)
LEARNED = "Turns out the pool must be closed before the worker forks."


def tool_call(command: str, output: str) -> list[ParsedMessage]:
    return [
        ParsedMessage(role="assistant", content=command, tool_name="Bash", tool_call_id=command),
        ParsedMessage(role="tool", content=output, tool_name="Bash", tool_call_id=command),
    ]


def agent_session(*texts: tuple[str, str]) -> ParsedSession:
    messages = [ParsedMessage(role=role, content=text) for role, text in texts]
    return ParsedSession(
        source_format="api",
        agent_name="coder",
        user_name="dana",
        messages=[messages[0], *tool_call("pytest -q", "1 failed: TimeoutError"), *messages[1:]],
    )


def extract_everything(session, callbacks) -> None:
    """Embedding, then the session's enrichment (whose commit makes extraction due), then
    extraction: the pipeline's order."""
    while pipeline.embed_pending_messages():
        pass
    Session.objects.filter(pk=session.pk).update(updated_at=timezone.now() - timedelta(hours=1))
    with callbacks(execute=True):
        while pipeline.enrich_pending_sessions():
            pass
    while run.extract_pending_sessions():
        pass


def memories_of(session):
    return Memory.objects.filter(session=session).order_by("id")


def snapshot(session) -> list[tuple]:
    rows = memories_of(session).values_list("public_id", "type", "content", "status")
    evidence = MemoryEvidence.objects.filter(session=session).values_list("memory_id", "message_id")
    return [*rows, *sorted(evidence)]


def test_a_session_gets_memories_linked_to_their_messages(
    project, django_capture_on_commit_callbacks
):
    session = capture_session(project, agent_session(("user", TASK), ("assistant", FOUND))).session
    extract_everything(session, django_capture_on_commit_callbacks)

    extraction = MemoryExtraction.objects.get(session=session)
    assert (extraction.status, extraction.method, extraction.error) == ("done", "offline", "")
    assert extraction.through_seq == session.message_count - 1 == 3
    found = {m.type: m for m in memories_of(session)}
    assert set(found) == {"preference", "finding", "decision"}
    preference, finding, decision = found["preference"], found["finding"], found["decision"]
    assert preference.content == "Please never add new dependencies without asking."
    # dana (the person) said it to coder, the character that holds it
    assert (preference.person, preference.agent) == ("dana", "coder")
    assert (preference.agent, preference.confidence, preference.public_id) == (
        "coder",
        "explicit",
        "PREF-001",
    )
    assert finding.details["location"] == {"artifact": "src/auth/login.py"}
    assert finding.resolution == "open" and finding.agent == "coder"
    assert decision.details["rationale"] == "the database allows only 20 connections"
    assert decision.details["alternatives_considered"] == [{"option": "per-request connections"}]
    for memory in found.values():
        assert (memory.origin, memory.extractor, memory.team_id) == (
            "extractor",
            "offline",
            project.team_id,
        )
        [evidence] = memory.evidence.all()
        assert evidence.quote in evidence.message.content
        assert (
            memory.occurred_at == evidence.message.timestamp or evidence.message.timestamp is None
        )
        assert memory.embedding is not None
    assert found["preference"].evidence.get().message.seq == 0
    assert found["decision"].evidence.get().message.seq == 3


def test_a_coding_session_sent_as_plain_messages_still_gives_decisions_and_findings(
    project, django_capture_on_commit_callbacks
):
    """No tool calls (an agent's hook posting only the conversation): the files the session
    talks about show it is work, so the agent's decision and finding are kept."""
    parsed = ParsedSession(
        source_format="api",
        agent_name="claude-code",
        messages=[
            ParsedMessage(role="user", content=TASK),
            ParsedMessage(role="assistant", content=FOUND),
        ],
    )
    session = capture_session(project, parsed).session
    extract_everything(session, django_capture_on_commit_callbacks)
    assert {m.type for m in memories_of(session)} == {"preference", "finding", "decision"}


def test_a_chat_with_an_assistant_keeps_only_what_the_person_says(
    project, django_capture_on_commit_callbacks
):
    parsed = ParsedSession(
        source_format="chatgpt",
        agent_name="chatgpt",
        messages=[
            ParsedMessage(role="user", content="I prefer vegetarian recipes."),
            ParsedMessage(role="assistant", content="We decided to use tofu because it is cheap."),
        ],
    )
    session = capture_session(project, parsed).session
    extract_everything(session, django_capture_on_commit_callbacks)
    assert [m.type for m in memories_of(session)] == ["preference"]


def test_extraction_is_incremental_and_idempotent(project, django_capture_on_commit_callbacks):
    session = capture_session(project, agent_session(("user", TASK), ("assistant", FOUND))).session
    extract_everything(session, django_capture_on_commit_callbacks)
    before = snapshot(session)

    # Nothing new: a second run, or the signal sent again, changes nothing.
    assert run.extract_pending_sessions() == 0
    extract_everything(session, django_capture_on_commit_callbacks)
    assert snapshot(session) == before

    append_messages(session, [ParsedMessage(role="assistant", content=LEARNED)])
    extract_everything(session, django_capture_on_commit_callbacks)
    after = memories_of(session)
    assert after.count() == 4
    learning = after.get(type="learning")
    assert learning.evidence.get().message.seq == 4
    assert snapshot(session)[:3] == before[:3]  # the older memories untouched
    assert MemoryExtraction.objects.get(session=session).through_seq == 4

    # A replay of everything (the position moved back) records nothing twice.
    MemoryExtraction.objects.filter(session=session).update(through_seq=-1, status="pending")
    counts = list(memories_of(session).values_list("access_count", flat=True))
    assert run.extract_pending_sessions() == 1
    assert list(memories_of(session).values_list("access_count", flat=True)) == counts
    assert MemoryEvidence.objects.filter(session=session).count() == 4


def test_a_failing_extractor_is_recorded_and_retried_with_backoff(
    project, monkeypatch, django_capture_on_commit_callbacks
):
    def broken(session, messages):
        raise RuntimeError("the rules broke on message 2")

    monkeypatch.setattr(offline, "extract", broken)
    session = capture_session(project, agent_session(("user", TASK), ("assistant", FOUND))).session
    extract_everything(session, django_capture_on_commit_callbacks)
    extraction = MemoryExtraction.objects.get(session=session)
    assert extraction.status == "failed" and extraction.attempts == 1
    assert extraction.error == "RuntimeError: the rules broke on message 2"
    assert extraction.through_seq == -1 and not memories_of(session).exists()
    # Embedding was not held up by it.
    assert not Message.objects.filter(session=session).exclude(enrichment_status="done").exists()

    monkeypatch.undo()
    assert run.requeue_failed(now=timezone.now() + timedelta(minutes=1)) == 0  # backoff: 2 min
    assert run.requeue_failed(now=timezone.now() + timedelta(minutes=3)) == 1
    assert run.extract_pending_sessions() == 1
    extraction.refresh_from_db()
    assert (extraction.status, extraction.error, extraction.through_seq) == ("done", "", 3)
    assert memories_of(session).count() == 3


def test_extraction_yields_to_embedding(project, monkeypatch, django_capture_on_commit_callbacks):
    from memories import tasks

    sessions = [
        capture_session(
            project, agent_session(("user", TASK), ("assistant", f"{FOUND} ({i})"))
        ).session
        for i in range(2)
    ]
    for session in sessions:
        extract_everything(session, django_capture_on_commit_callbacks)
    MemoryExtraction.objects.filter(session__in=sessions).update(status="pending", through_seq=-1)
    capture_session(project, agent_session(("user", "A new message waits for its vector.")))
    queued = []
    monkeypatch.setattr(tasks.embed_pending, "delay", lambda: queued.append("embed"))
    monkeypatch.setattr(tasks.extract_pending, "delay", lambda: queued.append("extract"))
    assert tasks.extract_pending() == 1
    assert queued == ["embed", "extract"]
    while pipeline.embed_pending_messages():
        pass
    queued.clear()
    assert tasks.extract_pending() == 1  # nothing to embed: it finishes the rest
    assert queued == []


def test_removing_a_message_removes_the_memories_read_from_it_and_reads_the_rest_again(
    project, django_capture_on_commit_callbacks
):
    admin = MembershipFactory(team=project.team, role=Role.ADMIN).user
    restated = "We decided to use a connection pool instead of per-request connections."
    session = capture_session(
        project,
        agent_session(
            ("user", TASK), ("assistant", FOUND), ("assistant", f"To repeat: {restated}")
        ),
    ).session
    extract_everything(session, django_capture_on_commit_callbacks)
    decision = memories_of(session).get(type="decision")
    finding = memories_of(session).get(type="finding")
    assert decision.evidence.count() == 2  # the restatement merged into it

    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(admin).delete(f"/api/v1/sessions/{session.public_id}/messages/3")
    assert response.status_code == 204, response.content
    assert not Memory.objects.filter(pk=finding.pk).exists()  # its only evidence is gone
    # A reading merged from the removed message may quote it: it goes too, and the session
    # is read again, so what was said again later comes back in its own words.
    assert not Memory.objects.filter(pk=decision.pk).exists()
    extract_everything(session, django_capture_on_commit_callbacks)
    again = memories_of(session).get(type="decision")
    assert [e.message.seq for e in again.evidence.all()] == [4]
    assert "connection pool" in again.content
    assert not memories_of(session).filter(type="finding").exists()
    assert memories_of(session).filter(type="preference").exists()


def test_a_restated_decision_merges_and_a_reversed_one_supersedes(
    project, django_capture_on_commit_callbacks
):
    first = capture_session(
        project,
        agent_session(
            ("user", "Set up the cache for the catalogue pages."),
            (
                "assistant",
                "We decided to use Redis instead of Memcached for the cache because we already "
                "run Redis for Celery.",
            ),
        ),
    ).session
    extract_everything(first, django_capture_on_commit_callbacks)
    decision = Memory.objects.get(project=project, type="decision")

    again = capture_session(
        project,
        agent_session(
            ("user", "Continue with the catalogue cache."),
            ("assistant", "As agreed, we decided to use Redis instead of Memcached for the cache."),
        ),
    ).session
    extract_everything(again, django_capture_on_commit_callbacks)
    decision.refresh_from_db()
    assert Memory.objects.filter(project=project, type="decision").count() == 1
    assert {e.session_id for e in decision.evidence.all()} == {first.pk, again.pk}
    assert decision.access_count == 1

    reversed_ = capture_session(
        project,
        agent_session(
            ("user", "Redis keeps running out of memory on the small box."),
            (
                "assistant",
                "We decided to switch to Memcached instead of Redis for the cache because the "
                "box has little memory.",
            ),
        ),
    ).session
    extract_everything(reversed_, django_capture_on_commit_callbacks)
    decision.refresh_from_db()
    newer = Memory.objects.get(project=project, type="decision", status=MemoryStatus.ACTIVE)
    assert decision.status == MemoryStatus.SUPERSEDED and newer.pk != decision.pk
    assert MemoryLink.objects.filter(
        source=newer, target=decision, kind=LinkKind.SUPERSEDES
    ).exists()


def test_a_changed_preference_supersedes_the_old_one(project, django_capture_on_commit_callbacks):
    for text in (
        "Please never squash commits when merging.",
        "Always squash commits when merging.",
    ):
        session = capture_session(
            project, agent_session(("user", text), ("assistant", "Noted."))
        ).session
        extract_everything(session, django_capture_on_commit_callbacks)
    old, new = Memory.objects.filter(project=project, type="preference").order_by("id")
    assert (old.status, new.status) == (MemoryStatus.SUPERSEDED, MemoryStatus.ACTIVE)
    assert old.topic == new.topic
    assert MemoryLink.objects.filter(source=new, target=old, kind=LinkKind.SUPERSEDES).exists()


def test_a_real_session_captured_again_restates_its_memories(
    project, shared_dir, django_capture_on_commit_callbacks
):
    """Aider's user states rules for the work ("Do NOT use Chart.js."); the same transcript
    captured again as another session adds evidence to the same memories, not new ones."""
    from transcripts import parse_path

    path = shared_dir / "samples" / "aider" / "metadata-aider.chat.history.md"
    sessions = []
    for copy in ("first", "second"):
        [parsed] = parse_path(path)
        parsed.external_id = f"aider-{copy}"
        sessions.append(capture_session(project, parsed).session)
        extract_everything(sessions[-1], django_capture_on_commit_callbacks)
    memories = Memory.objects.filter(project=project)
    assert sorted(memories.values_list("content", flat=True)) == [
        "Do NOT use Chart.js.",
        "Don't use external libraries.",
        "Only use vanilla HTML5 Canvas.",
    ]
    for memory in memories:
        assert memory.type == "preference" and memory.status == MemoryStatus.ACTIVE
        assert {e.session_id for e in memory.evidence.all()} == {s.pk for s in sessions}
        assert memory.access_count == 1
