"""The data model on real PostgreSQL: vectors through the HNSW index, the tsvector, ids."""

import re

import numpy as np
import pytest
from django.contrib.postgres.search import SearchQuery
from django.db import IntegrityError, connection, transaction
from pgvector.django import CosineDistance

from sessions.models import (
    SEARCH_CONFIG,
    Message,
    MessageChunk,
    Session,
    agent_slug,
)
from tests.factories import MessageFactory, ProjectFactory, SessionFactory

pytestmark = pytest.mark.django_db


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def test_vector_round_trips_through_the_hnsw_index(clean_vector_index):
    rng = np.random.default_rng(7)
    # Clustered vectors, as real embeddings are: 20 centres, 10 points around each.
    centres = [_unit(rng.normal(size=384)) for _ in range(20)]
    session = SessionFactory()
    chunks = []
    for i in range(200):
        vector = _unit(centres[i % 20] + 0.05 * rng.normal(size=384)).astype(np.float32)
        message = MessageFactory(session=session, seq=i, content=f"message {i}")
        chunks.append(
            MessageChunk(
                team=session.team,
                session=session,
                message=message,
                index=0,
                char_start=0,
                char_end=len(message.content),
                text=message.content,
                embedding=vector,
                model="all-MiniLM-L6-v2",
            )
        )
    MessageChunk.objects.bulk_create(chunks)

    stored = MessageChunk.objects.get(message__seq=42)
    assert len(stored.embedding) == 384
    assert np.allclose(np.asarray(stored.embedding), chunks[42].embedding, atol=1e-6)
    assert stored.model == "all-MiniLM-L6-v2"

    query = chunks[42].embedding
    nearest = MessageChunk.objects.order_by(CosineDistance("embedding", query))[:5]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        sql, params = nearest.query.sql_with_params()
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        assert "chunk_embedding_hnsw" in plan, plan
        ids = [c.message.seq for c in nearest]
    assert ids[0] == 42
    # The other four come from the same cluster (i % 20 == 2).
    assert all(seq % 20 == 2 for seq in ids)


def test_tsvector_finds_a_message_by_a_word_in_it():
    hit = MessageFactory(content="The deployment failed: nginx upstream timed out on /api/auth")
    MessageFactory(content="Lunch was a sandwich and some soup.")

    def search(q):
        query = SearchQuery(q, search_type="websearch", config=SEARCH_CONFIG)
        return list(Message.objects.filter(search_vector=query))

    assert search("nginx") == [hit]
    assert search("deploy") == [hit]  # stemmed: "deployment" → "deploy"
    assert search('"upstream timed out"') == [hit]
    assert search("nginx -upstream") == []
    assert search("kubernetes") == []


def test_huge_message_of_junk_is_stored_and_its_start_is_searchable():
    # 3 MB of distinct tokens would make a tsvector over PostgreSQL's 1 MB limit;
    # only the keyword-indexed prefix goes into it, so the insert still succeeds.
    junk = " ".join(f"tok{i:07x}" for i in range(300_000))
    message = MessageFactory(content="zanzibar " + junk)
    message.refresh_from_db()
    assert len(message.content) > 3_000_000
    query = SearchQuery("zanzibar", search_type="websearch", config=SEARCH_CONFIG)
    assert list(Message.objects.filter(search_vector=query)) == [message]


def test_public_id_follows_seed_000_format_and_agent_is_lowercase():
    session = SessionFactory(agent_name="Architect")
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}-architect-[0-9a-f]{6}", session.public_id)
    assert session.public_id.startswith(session.started_at.strftime("%Y-%m-%d"))
    assert session.agent_name == "architect"
    assert agent_slug("Claude Code / v2") == "claude-code-v2"
    assert agent_slug("!!!") == "agent"


def test_external_id_is_unique_per_project_only():
    project = ProjectFactory()
    SessionFactory(project=project, external_id="abc")
    SessionFactory(project=ProjectFactory(team=project.team), external_id="abc")  # other project
    SessionFactory(project=project, external_id="")  # blank ids never clash
    SessionFactory(project=project, external_id="")
    with pytest.raises(IntegrityError), transaction.atomic():
        SessionFactory(project=project, external_id="abc")
    assert Session.objects.filter(external_id="abc").count() == 2


def test_client_message_id_and_sequence_are_unique_per_session():
    session = SessionFactory()
    MessageFactory(session=session, seq=0, client_id="m-1")
    MessageFactory(session=session, seq=1, client_id="")
    MessageFactory(session=session, seq=2, client_id="")
    with pytest.raises(IntegrityError), transaction.atomic():
        MessageFactory(session=session, seq=3, client_id="m-1")
    with pytest.raises(IntegrityError), transaction.atomic():
        MessageFactory(session=session, seq=0)
    MessageFactory(session=SessionFactory(), seq=0, client_id="m-1")  # another session: fine


def test_every_index_and_constraint_has_a_name_we_gave_it():
    """Django's unnamed indexes are called <table>_<column>_<hash>; ours all have short names."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT tablename, indexname FROM pg_indexes
            WHERE schemaname = 'public'
              AND (tablename LIKE 'agent_sessions_%%' OR tablename LIKE 'teams_%%')
            """
        )
        rows = cursor.fetchall()
    generated = [
        (table, index) for table, index in rows if re.search(r"_[0-9a-f]{8}(_\w+)?$|_key$", index)
    ]
    assert rows, "no indexes found"
    assert generated == []
    names = {index for _, index in rows}
    for expected in (
        "chunk_embedding_hnsw",
        "session_embedding_hnsw",
        "message_search_gin",
        "session_project_external_uniq",
        "message_session_client_uniq",
        "entity_session_type_value_uniq",
    ):
        assert expected in names
