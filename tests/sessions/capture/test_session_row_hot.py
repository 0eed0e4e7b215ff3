"""Appends update their session's row without changing any column an index holds, so the
update can be HOT (heap-only): no new entry in any index, the session vector's HNSW graph
included, however many messages arrive one by one (migration 0020)."""

from __future__ import annotations

import pytest
from django.db import connection

from sessions.capture.service import append_messages, capture_session
from sessions.models import EMBEDDING_DIMENSIONS, Session
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = pytest.mark.django_db

TABLE = "agent_sessions_session"


def indexed_columns() -> set[str]:
    """The sessions table's columns that an index holds, as a key or in its predicate (an
    update changing any of them cannot be HOT)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a"
            " ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)"
            " WHERE i.indrelid = %s::regclass",
            [TABLE],
        )
        keys = {name for (name,) in cursor.fetchall()}
        cursor.execute(
            "SELECT pg_get_expr(i.indpred, i.indrelid) FROM pg_index i"
            " WHERE i.indrelid = %s::regclass AND i.indpred IS NOT NULL",
            [TABLE],
        )
        predicates = " ".join(text for (text,) in cursor.fetchall())
        cursor.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0",
            [TABLE],
        )
        in_predicates = {name for (name,) in cursor.fetchall() if name in predicates}
    return keys | in_predicates


def row(session_id: int) -> dict:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {TABLE} WHERE id = %s", [session_id])
        names = [column.name for column in cursor.description]
        return dict(zip(names, cursor.fetchone(), strict=True))


def test_an_append_to_an_enriched_session_changes_no_indexed_column(project):
    session = capture_session(
        project,
        ParsedSession(
            source_format="api",
            agent_name="dev",
            messages=[ParsedMessage("user", "Where do we deploy the billing service?")],
        ),
    ).session
    # As enrichment leaves it: a vector, and waiting for more messages before the next pass.
    Session.objects.filter(pk=session.pk).update(
        embedding=[0.1] * EMBEDDING_DIMENSIONS, enrichment_status="pending"
    )
    session.refresh_from_db()
    before = row(session.pk)
    append_messages(session, [ParsedMessage("assistant", "To the eu-west cluster, by Helm.")])
    after = row(session.pk)
    changed = {name for name in before if before[name] != after[name]}
    assert {"message_count", "updated_at"} <= changed  # the append did update the row
    assert changed & indexed_columns() == set()
