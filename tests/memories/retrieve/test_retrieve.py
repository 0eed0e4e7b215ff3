"""Hybrid search over memories (keyword + vector, scored like messages) and reading a memory
counting as an access. Real PostgreSQL, the real model; memories written through record."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from pgvector.django import CosineDistance

from memories.capture.record import MemoryDraft, record, resolve
from memories.decay import priority_of
from memories.models import Memory, MemoryScope, MemoryType
from memories.retrieve.query import MemoryFilters
from memories.retrieve.read_counts import note_access
from memories.retrieve.search import search_memories
from search import ranking, tuning
from sessions.embedding.query import embed_query
from teams.access import Access
from tests.factories import ProjectFactory, SessionFactory

pytestmark = pytest.mark.django_db

TEXTS = {
    "oauth": (MemoryType.DECISION, "Use OAuth 2.0 with JWT tokens for the public API"),
    "postgres": (MemoryType.DECISION, "Store sessions in PostgreSQL rather than MongoDB"),
    "tabs": (MemoryType.PREFERENCE, "The user prefers tabs over spaces in Python files"),
    "leak": (MemoryType.FINDING, "Memory leak in the websocket handler under heavy load"),
    "cook": (MemoryType.FACT, "Caroline enjoys cooking mushroom risotto on Sundays"),
}


def access_of(project) -> Access:
    return Access(team_ids=(project.team_id,), project_ids=(project.pk,))


@pytest.fixture
def memories(project):
    return {
        key: record(project, MemoryDraft(type=kind, content=text, reconcile=False)).memory
        for key, (kind, text) in TEXTS.items()
    }


def ids(hits) -> list[int]:
    return [h.memory.pk for h in hits]


@pytest.mark.parametrize("exact_up_to", [2_000, 0], ids=["exact scan", "hnsw index"])
def test_a_paraphrase_is_found_by_meaning_with_no_shared_word(
    project, memories, monkeypatch, exact_up_to
):
    monkeypatch.setattr(tuning, "EXACT_SCAN_MAX_MEMORIES", exact_up_to)
    hits = search_memories(access_of(project), "how do clients authenticate", limit=3)
    assert hits[0].memory == memories["oauth"]


def test_keyword_and_meaning_fuse_and_relevance_is_message_search_s(project, memories):
    query = "websocket memory leak"
    hits = search_memories(access_of(project), query, limit=5)
    top = hits[0]
    assert top.memory == memories["leak"]
    # Relevance is message search's measure of the same cosine and keyword match (the best
    # keyword match holds every word).
    similarity = 1 - float(
        Memory.objects.filter(pk=top.memory.pk)
        .annotate(d=semantic_distance(query))
        .values_list("d", flat=True)[0]
    )
    best = ranking.Candidate(0, similarity=similarity, coverage=1.0, keyword_score=1.0)
    expected = ranking.as_relevance(ranking.match_strength(best, "hybrid", 1.0))
    assert top.relevance == pytest.approx(expected, abs=1e-3)
    keyword_only = search_memories(access_of(project), query, mode="keyword", limit=5)
    full_words = ranking.as_relevance(ranking.match_strength(best, "keyword", 1.0))
    assert keyword_only[0].relevance == pytest.approx(full_words, abs=1e-3)
    assert set(ids(keyword_only)) == {memories["leak"].pk}


def semantic_distance(query):
    return CosineDistance("embedding", embed_query(query))


def test_min_relevance_drops_weak_matches(project, memories):
    hits = search_memories(access_of(project), "risotto for dinner", min_relevance=0.5)
    assert ids(hits) == [memories["cook"].pk]
    assert all(h.relevance >= 0.5 for h in hits)


def test_filters_apply_to_both_sides(project, memories):
    hits = search_memories(
        access_of(project), "tokens sessions tabs", MemoryFilters(types=("decision",)), limit=10
    )
    assert set(ids(hits)) <= {memories["oauth"].pk, memories["postgres"].pk}
    assert hits


def test_priority_orders_equal_matches(project):
    low = record(
        project, MemoryDraft(type="fact", content="The build server is named atlas")
    ).memory
    high = record(
        project,
        MemoryDraft(
            type="fact", content="The build server is named atlas", reconcile=False, pinned=True
        ),
    ).memory
    Memory.objects.filter(pk=low.pk).update(priority=0.35)
    Memory.objects.filter(pk=high.pk).update(priority=1.0)
    assert ids(search_memories(access_of(project), "build server name", limit=2)) == [
        high.pk,
        low.pk,
    ]


def test_another_team_s_and_deleted_session_s_memories_never_appear(project, memories):
    other = ProjectFactory()
    theirs = record(
        other, MemoryDraft(type="decision", content="Use OAuth 2.0 with JWT tokens everywhere")
    ).memory
    shared = record(
        other,
        MemoryDraft(type="decision", content="OAuth tokens expire after an hour", scope="team"),
    ).memory
    session = SessionFactory(project=project)
    trashed = record(
        project,
        MemoryDraft(type="decision", content="Rotate OAuth JWT signing keys", session=session),
    ).memory
    session.deleted_at = timezone.now()
    session.save(update_fields=["deleted_at"])
    found = set(ids(search_memories(access_of(project), "OAuth JWT tokens", limit=50)))
    assert memories["oauth"].pk in found
    assert not found & {theirs.pk, shared.pk, trashed.pk}


def test_team_scoped_memories_reach_every_project_of_the_team(project):
    sibling = ProjectFactory(team=project.team)
    shared = record(
        sibling,
        MemoryDraft(type="preference", content="Answer in British English", scope=MemoryScope.TEAM),
    ).memory
    assert ids(search_memories(access_of(project), "British English spelling")) == [shared.pk]


def test_note_access_counts_reads_and_recomputes_priority(project, memories):
    finding = memories["leak"]
    resolve(finding, by="dev", action_taken="patched")
    old = timezone.now() - timedelta(days=40)
    Memory.objects.filter(pk=finding.pk).update(
        occurred_at=old, last_accessed_at=old, priority=0.01
    )
    note_access([finding.pk, finding.pk])
    finding.refresh_from_db()
    assert finding.access_count == 1
    assert timezone.now() - finding.last_accessed_at < timedelta(seconds=30)
    assert finding.priority == pytest.approx(priority_of(finding), abs=1e-6)
    assert finding.priority > 0.01
    note_access([])  # nothing to do, no error
