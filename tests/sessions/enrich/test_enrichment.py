"""Session enrichment on real transcripts: entities, summary, topics, vector; progressive."""

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions.capture.service import append_messages, capture_session
from sessions.enrich import pipeline
from sessions.models import Entity, Session
from tests.factories import ProjectFactory
from transcripts import parse_path
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = pytest.mark.django_db


def settle(session):
    """Make the session look quiet for longer than SESSION_ENRICH_DELAY_SECONDS."""
    Session.objects.filter(pk=session.pk).update(updated_at=timezone.now() - timedelta(hours=1))


def test_a_real_session_gets_entities_summary_topics_and_a_vector(shared_dir):
    [parsed] = parse_path(shared_dir / "samples" / "claude_code" / "raze.jsonl")
    parsed.topics = []
    session = capture_session(ProjectFactory(), parsed).session
    assert session.enrichment_status == "pending"
    settle(session)

    assert pipeline.enrich_pending_sessions() == 1
    session.refresh_from_db()
    assert session.enrichment_status == "done", session.enrichment_error
    assert session.summary.startswith(("Task:", "Topic:"))
    assert len(session.summary) <= 600
    assert session.enriched_through_seq == session.message_count - 1
    assert session.embedding is not None and len(session.embedding) == 384
    assert session.topics and session.metadata["topics_derived"] is True
    types = set(Entity.objects.filter(session=session).values_list("type", flat=True))
    assert {"FILE", "COMMAND"} <= types
    assert all(e.team_id == session.team_id for e in Entity.objects.filter(session=session))
    # Nothing new: nothing to do.
    assert pipeline.enrich_pending_sessions() == 0


def test_a_growing_session_is_enriched_progressively(shared_dir):
    [parsed] = parse_path(shared_dir / "samples" / "claude_code" / "raze.jsonl")
    session = capture_session(ProjectFactory(), parsed).session
    settle(session)
    pipeline.enrich_pending_sessions()
    session.refresh_from_db()
    first_summary, through = session.summary, session.enriched_through_seq
    a_file = Entity.objects.filter(session=session, type="FILE").order_by("id").first()

    append_messages(
        session,
        [
            ParsedMessage(role="user", content=f"Now add tests for {a_file.value} please."),
            ParsedMessage(
                role="assistant", content="pytest -q", tool_name="Bash", tool_call_id="x1"
            ),
            ParsedMessage(
                role="tool", content="5 passed in 0.3s", tool_name="Bash", tool_call_id="x1"
            ),
        ],
    )
    session.refresh_from_db()
    assert session.enrichment_status == "pending"
    settle(session)
    assert pipeline.enrich_pending_sessions() == 1
    session.refresh_from_db()
    assert session.enriched_through_seq == through + 3
    assert session.summary != first_summary
    assert session.summary.split(".")[0] == first_summary.split(".")[0]  # same task
    assert Entity.objects.get(pk=a_file.pk).count == a_file.count + 1
    assert Entity.objects.filter(session=session, type="COMMAND", normalized="pytest -q").exists()


def test_a_busy_session_waits_until_it_is_quiet(shared_dir):
    [parsed] = parse_path(shared_dir / "samples" / "claude_code" / "agentic-wallet.jsonl")
    session = capture_session(ProjectFactory(), parsed).session
    assert pipeline.enrich_pending_sessions() == 0  # just written: debounced
    settle(session)
    assert pipeline.enrich_pending_sessions() == 1


def test_a_failing_enrichment_is_recorded_and_retried_later(monkeypatch, shared_dir):
    [parsed] = parse_path(shared_dir / "samples" / "claude_code" / "agentic-wallet.jsonl")
    session = capture_session(ProjectFactory(), parsed).session
    settle(session)

    def broken(session):
        raise RuntimeError("summariser exploded")

    monkeypatch.setattr(pipeline, "enrich_session", broken)
    assert pipeline.enrich_pending_sessions() == 1
    session.refresh_from_db()
    assert session.enrichment_status == "failed"
    assert session.enrichment_error == "RuntimeError: summariser exploded"
    assert session.enrichment_attempts == 1
    assert pipeline.requeue_failed(now=timezone.now() + timedelta(minutes=3)) == 1
    session.refresh_from_db()
    assert session.enrichment_status == "pending"


def test_session_enrichment_yields_to_embedding(monkeypatch):
    """Freshness first: while messages wait for their vectors, an enrichment task summarises
    one session, hands the worker to embedding and queues itself behind it."""
    from sessions import tasks

    project = ProjectFactory()
    for i in range(3):
        settle(
            capture_session(
                project,
                ParsedSession(
                    source_format="api",
                    messages=[ParsedMessage(role="user", content=f"note {i} about the deploy")],
                ),
            ).session
        )
    queued = []
    monkeypatch.setattr(tasks.embed_pending, "delay", lambda: queued.append("embed"))
    monkeypatch.setattr(tasks.enrich_sessions, "delay", lambda: queued.append("enrich"))
    assert pipeline.has_pending_messages()
    assert tasks.enrich_sessions() == 1
    assert queued == ["embed", "enrich"]

    while pipeline.embed_pending_messages():
        pass
    queued.clear()
    assert tasks.enrich_sessions() == 2  # nothing to embed: it finishes the rest
    assert queued == []
    assert not Session.objects.filter(enrichment_status="pending").exists()
