"""Search over diary entries by meaning and keyword: a keyword side (the entry's
``search_vector``, websearch syntax) and a vector side (cosine over ``embedding``), fused by
reciprocal rank (k = 60). Diaries are small (one entry per person, character and day), so
both sides read the scoped entries directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db.models import F
from pgvector.django import CosineDistance

from memories.diary.models import DiaryEntry
from sessions.embedding.query import embed_query
from sessions.models import SEARCH_CONFIG

RRF_K = 60
POOL = 50


@dataclass
class DiaryHit:
    entry: DiaryEntry
    relevance: float  # cosine similarity to the query, 0..1 (0 when only a keyword matched)


def search_diary(entries, query: str, limit: int = 10) -> list[DiaryHit]:
    """The entries of ``entries`` (a scoped queryset) best matching ``query``, best first."""
    entries = entries.defer("search_vector")
    words = SearchQuery(query, config=SEARCH_CONFIG, search_type="websearch")
    keyword = list(
        entries.filter(search_vector=words)
        .annotate(rank=SearchRank(F("search_vector"), words))
        .order_by("-rank", "-day", "id")
        .values_list("pk", flat=True)[:POOL]
    )
    nearest = list(
        entries.exclude(embedding=None)
        .annotate(distance=CosineDistance("embedding", embed_query(query)))
        .order_by("distance", "id")
        .values_list("pk", "distance")[:POOL]
    )
    scores: dict[int, float] = {}
    for ranked in (keyword, [pk for pk, _ in nearest]):
        for rank, pk in enumerate(ranked, start=1):
            scores[pk] = scores.get(pk, 0.0) + 1.0 / (RRF_K + rank)
    similarity = {pk: max(0.0, min(1.0, 1.0 - distance)) for pk, distance in nearest}
    best = sorted(scores, key=lambda pk: (-scores[pk], pk))[:limit]
    found = entries.in_bulk(best)
    return [DiaryHit(found[pk], round(similarity.get(pk, 0.0), 4)) for pk in best if pk in found]
