"""The stored keyword ranking document (``Message.ranking_vector``) is always the one its
definition gives (``RANKING_DOCUMENT``: the message's own words weighted A, then its
context's) after everything that writes a message's content or context: capture (with
redaction), appends, removal, anonymisation, compaction and the migration that fills old
rows; and search ranks on it with the scores it gave when it built the document per query."""

from __future__ import annotations

import importlib
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.db import connection, transaction
from django.utils import timezone

from search import keyword
from search.service import searched_filters
from sessions.capture.keyword_context import RANKING_DOCUMENT
from sessions.capture.service import append_messages, capture_session
from sessions.filters import Filters
from sessions.forget.anonymize import AnonymizationConfig, anonymize_session, start_run
from sessions.forget.compaction import FOLD_OVER_BYTES, compact_session
from sessions.forget.messages import remove_message
from sessions.models import Message, Session
from teams.access import Access
from tests.factories import ProjectFactory
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = pytest.mark.django_db

SECRET_KEY = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 3
LONG_LOG = "\n".join(f"step {i}: rebuilt the kubernetes ingress for shard {i}" for i in range(400))


def stale_documents(session_ids: list[int]) -> list[tuple[int, int]]:
    """(session id, seq) of the messages whose stored document is missing or not the one
    the definition gives from the row as it is now."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.session_id, m.seq FROM agent_sessions_message m"
            " WHERE m.session_id = ANY(%s) AND (m.ranking_vector IS NULL"
            f" OR m.ranking_vector <> {RANKING_DOCUMENT.format(m='m')}) ORDER BY 1, 2",
            [session_ids],
        )
        return cursor.fetchall()


def own_and_context_words(message_id: int) -> tuple[bool, bool]:
    """Whether the stored document holds "kubernetes" as an own word (weight A) and
    "deploy" as a context word (weight D)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT ranking_vector @@ 'kubernet:A'::tsquery,"
            " ranking_vector @@ 'deploy:D'::tsquery FROM agent_sessions_message WHERE id = %s",
            [message_id],
        )
        return cursor.fetchone()


def conversation(hours_ago: float = 0) -> ParsedSession:
    when = timezone.now() - timedelta(hours=hours_ago)
    say = [
        ("user", "How do we deploy the kubernetes ingress to staging?"),
        ("assistant", "Run make deploy; it applies the kubernetes manifests."),
        ("tool", LONG_LOG),
        ("user", f"Maria Garcia says the key is {SECRET_KEY}, is that fine?"),
        ("assistant", "Never paste keys: I rotated it. The ingress is up on staging."),
    ]
    return ParsedSession(
        source_format="api",
        agent_name="dev",
        user_name="Maria Garcia",
        messages=[
            ParsedMessage(
                role, text, timestamp=when + timedelta(seconds=i), tool_name="sh" * (role == "tool")
            )
            for i, (role, text) in enumerate(say)
        ],
    )


@pytest.fixture
def session():
    return capture_session(ProjectFactory(), conversation()).session


def test_capture_stores_the_document_of_every_message_redacted_text_included(session):
    assert stale_documents([session.pk]) == []
    stored = Message.objects.get(session=session, seq=3)
    assert SECRET_KEY not in stored.content  # redaction happened before the words were taken
    assert own_and_context_words(Message.objects.get(session=session, seq=1).pk) == (True, True)


def test_an_append_refreshes_the_document_of_the_message_before_it(session):
    before = Message.objects.get(session=session, seq=4).ranking_vector
    append_messages(
        session,
        [ParsedMessage("user", "Great, now deploy the zeppelin service the same way.")],
    )
    assert stale_documents([session.pk]) == []
    # The one before took the new message's words as context.
    assert Message.objects.get(session=session, seq=4).ranking_vector != before


def test_removing_a_message_leaves_every_document_as_defined(session, user):
    remove_message(session, 1, by=user, reason="test")
    assert stale_documents([session.pk]) == []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT ranking_vector = ''::tsvector FROM agent_sessions_message"
            " WHERE session_id = %s AND seq = 1",
            [session.pk],
        )
        assert cursor.fetchone()[0]  # the tombstone is found by nothing


def test_anonymising_a_session_rewrites_the_documents(session):
    run = start_run(session.project, AnonymizationConfig(), dry_run=False)
    anonymize_session(session, run)
    assert stale_documents([session.pk]) == []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM agent_sessions_message WHERE session_id = %s"
            " AND ranking_vector @@ 'maria'::tsquery",
            [session.pk],
        )
        assert cursor.fetchone()[0] == 0


def test_compaction_rewrites_the_documents():
    project = ProjectFactory()
    old = conversation(hours_ago=24 * 10)
    old.messages[2] = ParsedMessage(
        "tool",
        LONG_LOG + "x" * FOLD_OVER_BYTES,
        timestamp=old.messages[2].timestamp,
        tool_name="sh",
    )
    session = capture_session(project, old).session
    with transaction.atomic():
        locked = Session.objects.select_for_update(no_key=True).get(pk=session.pk)
        result = compact_session(locked, respect_access=False)
    assert result.bytes_freed > 0
    assert stale_documents([session.pk]) == []


def test_the_migration_fills_the_rows_captured_before_it(session):
    other = capture_session(ProjectFactory(), conversation()).session
    Message.objects.filter(session__in=[session, other]).update(ranking_vector=None)
    migration = importlib.import_module("sessions.migrations.0017_fill_ranking_vectors")
    migration.fill(None, SimpleNamespace(connection=connection))
    assert stale_documents([session.pk, other.pk]) == []


def previous_scores(kquery, idfs, message_ids) -> dict[int, tuple[float, float]]:
    """The scores as search gave them before the document was stored: built per query,
    each lexeme's ts_rank and match on it (``keyword._score_sql``)."""
    score, coverage, params = keyword._score_sql(kquery, keyword._literal(idfs))
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH d AS MATERIALIZED (SELECT m.id, {RANKING_DOCUMENT.format(m='m')} AS doc"
            " FROM agent_sessions_message m WHERE m.id = ANY(%s))"
            f" SELECT d.id, {score}, {coverage} FROM d",
            [message_ids, *params],
        )
        return {row[0]: (row[1], row[2]) for row in cursor.fetchall()}


QUERIES = [
    "how did we deploy the kubernetes ingress?",
    "staging",
    "shard 42 rebuilt",
    '"kubernetes ingress" -zeppelin',
    "who is Maria?",
]


@pytest.mark.parametrize("pooled", [False, True], ids=["counted", "pooled"])
def test_search_scores_are_those_of_the_per_query_document(session, monkeypatch, pooled):
    """Exactly equal floats, on stored documents and on rows not filled yet, for both ways
    of ranking (every match counted in small scopes, the rare words' pools in big ones) and
    for the vector side's finds."""
    if pooled:
        monkeypatch.setattr(keyword, "EXACT_STATS_MAX_DOCS", 0)
    append_messages(session, [ParsedMessage("user", "And the zeppelin ingress on staging?")])
    access = Access(team_ids=(session.team_id,), project_ids=(session.project_id,))
    filters = searched_filters(Filters(), False)
    ids = list(Message.objects.filter(session=session).values_list("id", flat=True))
    for text in QUERIES:
        kquery = keyword.parse(text)
        found, idfs = keyword.candidates(kquery, access, filters, 50, len(ids))
        assert found, text
        expected = previous_scores(kquery, idfs, ids)
        assert {i: (s.score, s.coverage) for i, s in found.items()} == {
            i: expected[i] for i in found
        }, text
        scored = keyword.scores_for(kquery, idfs, ids)
        assert {i: (s.score, s.coverage) for i, s in scored.items()} == expected, text
        # A row whose document is not stored yet is ranked the same.
        Message.objects.filter(session=session, seq__in=[1, 2]).update(ranking_vector=None)
        again, _ = keyword.candidates(kquery, access, filters, 50, len(ids))
        assert again == found, text
        migration = importlib.import_module("sessions.migrations.0017_fill_ranking_vectors")
        migration.fill(None, SimpleNamespace(connection=connection))
