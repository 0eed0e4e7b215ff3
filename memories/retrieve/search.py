"""Search over memories by meaning and keyword (``q=``), with the same relevance semantics
as message search.

Two candidate lists, as for messages: the keyword side (the memory's ``search_vector`` on its
GIN index, any of the query's words, ranked BM25-style: ``search/keyword.py``) and the vector
side (cosine over ``embedding`` on its HNSW index). Each memory's relevance is the one score
of ``search/ranking.py`` (``match_strength`` → ``as_relevance``: its cosine plus its keyword
coverage times its BM25 strength against the query's best), so a memory's relevance of 0.3
means what a message's does, and the list is ordered by the relevance it shows. A memory has
no session to be supported by, and is not prose-or-noise: those parts of the message score
do not apply.

Word rarity (IDF) comes from the message statistics PostgreSQL keeps
(``keyword.estimated_idfs``): memories are written in the words of their sessions, and
counting every match among a team's memories would cost more than the search.

Memories of equal relevance are ordered by their decay priority.

The vector side scans the HNSW index of the memory table alone, with every filter of
``MemoryFilters`` (all columns of that table) in the same statement and pgvector's
iterative scan, so a narrow filter still fills the page; the scoping path ``visible``
then confirms each memory (a session in the trash, for one, takes a join the index scan
cannot have).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import BooleanField, FloatField, Value
from django.db.models.expressions import RawSQL

from memories.models import Memory, MemoryStatus
from memories.retrieve.query import MemoryFilters, apply, visible
from search import keyword, ranking, semantic, tuning
from search.speed import parallel
from teams.access import Access

MODES = ("hybrid", "semantic", "keyword")
# IDFs are estimated as if over this many documents: only their ratios weigh the words.
IDF_DOCUMENTS = 100_000
DOCUMENT = '"memories_memory"."search_vector"'


@dataclass
class MemoryHit:
    memory: Memory
    relevance: float  # 0..1, as message search reports it


def search_memories(
    access: Access,
    query: str,
    filters: MemoryFilters | None = None,
    limit: int = 10,
    *,
    mode: str = "hybrid",
    min_relevance: float = 0.0,
) -> list[MemoryHit]:
    """The memories ``access`` sees that best match ``query``, best first."""
    filters = filters or MemoryFilters()
    pool = max(tuning.MIN_POOL, limit * 5)
    # The keyword side runs on its own connection while this thread embeds the query and
    # scans vectors, as message search does (search/speed/parallel.py).
    keyword_side = parallel.beside(_keyword_side, query, access, filters, pool, mode != "semantic")
    vector = semantic.query_vector(query) if mode != "keyword" else None
    candidates: dict[int, ranking.Candidate] = {}
    if vector is not None:
        for rank, memory_id in enumerate(_nearest(vector, access, filters, pool), start=1):
            candidates[memory_id] = ranking.Candidate(memory_id, rank_vector=rank)
    kquery, idfs, matches = keyword_side.result()
    for rank, memory_id in enumerate(matches, start=1):
        c = candidates.setdefault(memory_id, ranking.Candidate(memory_id))
        c.rank_keyword = rank
    if not candidates:
        return []
    memories = _measured(list(candidates), kquery, idfs, vector, access, filters)
    for memory_id, c in candidates.items():
        memory = memories.get(memory_id)
        if memory is not None:
            # Each memory is its own group (a memory has no session to be supported by).
            c.session_id = memory_id
            c.similarity = None if memory.distance is None else 1.0 - memory.distance
            c.coverage = float(memory.coverage or 0.0)
            c.keyword_score = float(memory.keyword_score or 0.0)
    found = [c for c in candidates.values() if c.message_id in memories]
    best_keyword_score = max((c.keyword_score for c in found), default=0.0)
    for c in found:
        c.relevance = round(
            ranking.as_relevance(ranking.match_strength(c, mode, best_keyword_score)), 4
        )
    # The relevance shown orders the list; the decay priority only breaks its ties.
    found.sort(key=lambda c: (-c.relevance, -memories[c.message_id].priority, c.message_id))
    return [
        MemoryHit(memories[c.message_id], c.relevance)
        for c in found
        if c.relevance >= min_relevance
    ][:limit]


def _distance(vector: str) -> RawSQL:
    """Cosine distance to the query's vector (a pgvector literal: cached per query text)."""
    return RawSQL('"memories_memory"."embedding" <=> %s::vector', [vector], FloatField())


def _columns_only(access: Access, filters: MemoryFilters):
    """What ``visible`` + ``apply`` ask, on memory columns only (no join): the caller's
    scope (``Access.scope``), not deleted, and the filters."""
    return apply(access.scope(Memory.objects.exclude(status=MemoryStatus.DELETED)), filters)


def _nearest(vector: str, access: Access, filters: MemoryFilters, pool: int) -> list[int]:
    scope = _columns_only(access, filters).filter(embedding__isnull=False)
    exact_up_to = tuning.EXACT_SCAN_MAX_MEMORIES
    if scope.values("id")[: exact_up_to + 1].count() <= exact_up_to:
        # A small scope is scanned exactly. Through the HNSW index it depends on what the
        # index holds besides: entries of rows deleted or updated since the last vacuum
        # (a memory's every read updates its row) are visited and passed over, and when
        # enough of them sit nearest (the same text recorded, changed or read again and
        # again) the scan stops at its tuple limit with nothing found. "+ 0" keeps the
        # planner off the index.
        exact = _distance(vector) + Value(0.0)
        return list(scope.order_by(exact, "id").values_list("id", flat=True)[:pool])
    nearest = scope.order_by(_distance(vector)).values_list("id", flat=True)[:pool]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
            " set_config('hnsw.ef_search', %s, true),"
            " set_config('hnsw.max_scan_tuples', %s, true)",
            [str(max(tuning.HNSW_EF_SEARCH, pool)), str(tuning.HNSW_MAX_SCAN_TUPLES)],
        )
        # relaxed_order may return near-ties out of order: the ranks come from the distances.
        return list(nearest)


def _keyword_side(
    query: str, access: Access, filters: MemoryFilters, pool: int, ranked: bool
) -> tuple[keyword.KeywordQuery, list[float], list[int]]:
    """The query's lexemes, their IDFs and (when ``ranked``) the best keyword matches."""
    kquery = keyword.parse(query)
    idfs = keyword.estimated_idfs(kquery, IDF_DOCUMENTS)
    if not ranked or not kquery.terms:
        return kquery, idfs, []
    return kquery, idfs, _keyword(kquery, idfs, access, filters, pool)


def _keyword(
    kquery: keyword.KeywordQuery,
    idfs: list[float],
    access: Access,
    filters: MemoryFilters,
    pool: int,
) -> list[int]:
    score, _coverage, params = keyword.score_sql(kquery, idfs, DOCUMENT)
    matches = (
        _columns_only(access, filters)
        .alias(
            matched=RawSQL(f"{DOCUMENT} @@ %s::tsquery", [kquery.any_term], BooleanField()),
            score=RawSQL(score, params[: len(kquery.terms)], FloatField()),
        )
        .filter(matched=True)
        .order_by("-score", "id")
        .values_list("id", flat=True)[:pool]
    )
    return list(matches)


def _measured(
    ids: list[int],
    kquery: keyword.KeywordQuery,
    idfs: list[float],
    vector: str | None,
    access: Access,
    filters: MemoryFilters,
) -> dict[int, Memory]:
    """The candidates that pass the scoping path, each with its cosine distance to the
    query and its keyword coverage (whichever side found it)."""
    memories = apply(visible(access), filters).filter(id__in=ids)
    distance = Value(None, FloatField())
    if vector is not None:
        distance = _distance(vector)
    coverage = keyword_score = Value(0.0, FloatField())
    if kquery.terms:
        score, sql, params = keyword.score_sql(kquery, idfs, DOCUMENT)
        keyword_score = RawSQL(score, params[: len(kquery.terms)], FloatField())
        coverage = RawSQL(sql, params[len(kquery.terms) :], FloatField())
    memories = memories.annotate(distance=distance, coverage=coverage, keyword_score=keyword_score)
    return {m.pk: m for m in memories.defer("search_vector", "embedding")}
