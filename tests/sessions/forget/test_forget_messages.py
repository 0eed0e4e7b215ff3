"""Removing one message: a tombstone in its place, and nothing of its text left anywhere —
vectors, keyword index and context, entities, summary — with the real embedding and
enrichment before and after."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from sessions.capture.service import capture_session
from sessions.enrich import pipeline
from sessions.enrich import session as enrich_module
from sessions.forget.lifecycle import LifecycleConflict, soft_delete
from sessions.forget.messages import MessageAlreadyRemoved, remove_message
from sessions.models import DeletionRecord, Entity, Message, MessageChunk, Session
from tests.factories import ProjectFactory
from tests.traces import rows_holding
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = pytest.mark.django_db

WORD = "zorblaxian"
SECRET = f"The loader in src/{WORD}_loader.py reads the {WORD} settings; the token is in it."


def conversation() -> ParsedSession:
    return ParsedSession(
        source_format="api",
        title="Fix the settings loader",
        agent_name="coder",
        messages=[
            ParsedMessage(role="user", content="Why does the app fail to start?"),
            ParsedMessage(role="assistant", content=SECRET),
            ParsedMessage(role="user", content="Can you fix src/app/config.py then?"),
            ParsedMessage(role="assistant", content="Fixed src/app/config.py; run pytest -q."),
            ParsedMessage(role="user", content="Thanks, that works."),
        ],
    )


def settle(session):
    Session.objects.filter(pk=session.pk).update(updated_at=timezone.now() - timedelta(hours=1))


def enrich_everything(session):
    while pipeline.embed_pending_messages():
        pass
    settle(session)
    while pipeline.enrich_pending_sessions():
        settle(session)


@pytest.fixture
def enriched(user):
    session = capture_session(ProjectFactory(), conversation()).session
    enrich_everything(session)
    session.refresh_from_db()
    assert session.enrichment_status == "done", session.enrichment_error
    # The word is everywhere a message's text goes: chunks, entities, context, summary.
    held = rows_holding(WORD, session_id=session.pk)
    assert {"agent_sessions_messagechunk", "agent_sessions_entity"} <= set(held), held
    assert held["agent_sessions_message"] >= 3  # itself and its neighbours' context
    return session


def context_holds(message_id: int, word: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT context_vector @@ plainto_tsquery('english', %s) "
            "FROM agent_sessions_message WHERE id = %s",
            [word, message_id],
        )
        return bool(cursor.fetchone()[0])


def test_a_removed_message_leaves_a_tombstone_and_no_trace(enriched, user):
    size_before = enriched.size_bytes
    removal = remove_message(enriched, 1, by=user, reason="held a secret")

    tombstone = Message.objects.get(session=enriched, seq=1)
    assert tombstone.content == "" and tombstone.metadata == {}
    assert tombstone.removed_by == user.username and tombstone.removed_at is not None
    assert tombstone.enrichment_status == "done" and tombstone.context_vector is None
    assert not MessageChunk.objects.filter(message=tombstone).exists()
    enriched.refresh_from_db()
    assert enriched.size_bytes == size_before - len(SECRET.encode()) == size_before - removal.bytes
    assert enriched.message_count == 5  # the tombstone keeps its place
    # At once, before any rebuild: nothing holds the word, whatever the table.
    assert rows_holding(WORD) == {}
    # The neighbours' keyword context was computed again, still with the other messages.
    after = Message.objects.get(session=enriched, seq=2)
    assert not context_holds(after.pk, WORD) and context_holds(after.pk, "start")

    record = DeletionRecord.objects.get(scope="message")
    assert record.session_ids == [enriched.public_id] and record.criteria == {"seq": 1}
    assert (record.messages, record.bytes, record.recovery_deadline) == (1, removal.bytes, None)
    assert record.reason == "held a secret" and record.actor == user.username

    # The rebuild from scratch brings back what the other messages hold, not the word.
    assert enriched.enrichment_status == "pending" and enriched.enriched_through_seq == -1
    enrich_everything(enriched)
    enriched.refresh_from_db()
    assert enriched.enrichment_status == "done" and enriched.summary
    assert enriched.embedding is not None
    values = set(Entity.objects.filter(session=enriched).values_list("normalized", flat=True))
    assert "src/app/config.py" in values
    assert not any(WORD in value for value in values)
    assert rows_holding(WORD) == {}


def test_removing_a_removed_message_is_a_conflict_with_when_and_who(enriched, user):
    remove_message(enriched, 1, by=user)
    with pytest.raises(MessageAlreadyRemoved) as conflict:
        remove_message(enriched, 1, by=None)
    assert conflict.value.state["state"] == "removed"
    assert conflict.value.state["removed_by"] == user.username
    assert DeletionRecord.objects.filter(scope="message").count() == 1


def test_a_session_in_the_trash_is_restored_before_a_message_is_removed(enriched, user):
    soft_delete(enriched, by=user)
    with pytest.raises(LifecycleConflict) as conflict:
        remove_message(enriched, 1, by=user)
    assert conflict.value.state["state"] == "in_trash"
    assert Message.objects.get(session=enriched, seq=1).content == SECRET


def test_an_enrichment_that_read_the_message_before_it_was_removed_writes_nothing(
    user, monkeypatch
):
    """The enrichment reads messages, computes for seconds, then writes under the session
    lock: a removal in between must win, or the word would come back in entities."""
    session = capture_session(ProjectFactory(), conversation()).session
    settle(session)
    real = enrich_module._entity_changes

    def slow_entity_changes(target, messages):
        changes = real(target, messages)
        remove_message(session, 1, by=user)  # meanwhile, an admin removes it
        return changes

    monkeypatch.setattr(enrich_module, "_entity_changes", slow_entity_changes)
    assert pipeline.enrich_pending_sessions(limit=1) == 1
    monkeypatch.setattr(enrich_module, "_entity_changes", real)
    session.refresh_from_db()
    assert session.enrichment_status == "pending" and session.summary == ""
    assert rows_holding(WORD) == {}
    enrich_everything(session)
    assert rows_holding(WORD) == {}
    assert Entity.objects.filter(session=session, normalized="src/app/config.py").exists()


def test_a_title_taken_from_the_removed_message_goes_with_it(user):
    project = ProjectFactory()
    parsed = ParsedSession(
        source_format="api",
        agent_name="coder",
        messages=[
            ParsedMessage(role="user", content="Call Alice on 555-0100 about qwertzium"),
            ParsedMessage(role="assistant", content="Noted."),
        ],
    )
    session = capture_session(project, parsed).session
    assert "qwertzium" in session.title  # named by its first line
    remove_message(session, 0, by=user, reason="a phone number")
    session.refresh_from_db()
    assert session.title == ""
    assert not rows_holding("qwertzium")
