"""Memories as extra keys to messages (``search/extra_keys.py``): the memories matching a
query point message search to the messages they came from, which may say it in other
words ("I'm off to Paris in May" behind "Caroline plans a trip to France")."""

from __future__ import annotations

from memories.models import MemoryEvidence
from memories.retrieve.query import MemoryFilters
from memories.retrieve.search import search_memories
from teams.access import Access

# Superseded memories still say what their messages said; decayed ones too.
KEY_FILTERS = MemoryFilters(status="", include_decayed=True)
# Memories below this relevance point nowhere (bench/locomo.py --memory-keys measures it).
KEY_MIN_RELEVANCE = 0.0


def evidence_messages(access: Access, query: str, limit: int) -> list[int]:
    """The evidence messages of the memories best matching ``query``, best first."""
    hits = search_memories(access, query, KEY_FILTERS, limit=limit, min_relevance=KEY_MIN_RELEVANCE)
    order = {hit.memory.pk: position for position, hit in enumerate(hits)}
    rows = MemoryEvidence.objects.filter(memory_id__in=list(order)).values_list(
        "memory_id", "message_id"
    )
    ranked = sorted(rows, key=lambda row: (order[row[0]], row[1]))
    return list(dict.fromkeys(message_id for _, message_id in ranked))[:limit]
