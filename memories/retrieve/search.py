"""Search over memories by meaning and keyword (``q=``), with the same relevance semantics
as message search (search/ranking.py). Placeholder: keyword only, to be made hybrid."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.postgres.search import SearchQuery, SearchRank

from memories.models import Memory
from memories.retrieve.query import MemoryFilters, apply, visible
from sessions.models import SEARCH_CONFIG
from teams.access import Access


@dataclass
class MemoryHit:
    memory: Memory
    relevance: float  # 0..1, as message search reports it


def search_memories(
    access: Access, query: str, filters: MemoryFilters | None = None, limit: int = 10
) -> list[MemoryHit]:
    ts_query = SearchQuery(query, config=SEARCH_CONFIG, search_type="websearch")
    rows = (
        apply(visible(access), filters or MemoryFilters())
        .filter(search_vector=ts_query)
        .annotate(rank=SearchRank("search_vector", ts_query))
        .order_by("-rank", "-priority")[:limit]
    )
    return [MemoryHit(memory, min(1.0, float(memory.rank))) for memory in rows]
