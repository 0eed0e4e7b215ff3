"""What relates to a memory (docs/api.md, "Memories"): its relationships both ways,
then the memories nearest to it by meaning that it is not already linked to."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import connection, transaction
from pgvector.django import CosineDistance

from memories.models import Memory, MemoryLink
from memories.retrieve.query import MemoryFilters, apply, visible
from search import tuning
from teams.access import Access


@dataclass
class LinkedMemory:
    kind: str
    direction: str  # "out": this memory <kind> the other; "in": the other <kind> this one
    memory: Memory


@dataclass
class SimilarMemory:
    memory: Memory
    similarity: float  # cosine similarity, -1..1


@dataclass
class Related:
    links: list[LinkedMemory] = field(default_factory=list)
    similar: list[SimilarMemory] = field(default_factory=list)


def related(access: Access, memory: Memory, *, limit: int = 5, min_similarity: float = 0.5):
    """``memory``'s links to the memories ``access`` sees (a link to one it cannot see is
    left out), and up to ``limit`` others by meaning with a cosine of ``min_similarity`` or
    more, among the live memories it sees (decayed ones included)."""
    seen = visible(access)
    links = [
        LinkedMemory(link.kind, "out", link.target)
        for link in MemoryLink.objects.filter(source=memory, target__in=seen).select_related(
            "target"
        )
    ] + [
        LinkedMemory(link.kind, "in", link.source)
        for link in MemoryLink.objects.filter(target=memory, source__in=seen).select_related(
            "source"
        )
    ]
    found = Related(links=links)
    if memory.embedding is None or limit < 1:
        return found
    linked = {entry.memory.pk for entry in links} | {memory.pk}
    nearest = (
        apply(seen, MemoryFilters(include_decayed=True))
        .exclude(pk__in=linked)
        .exclude(embedding__isnull=True)
        .annotate(distance=CosineDistance("embedding", memory.embedding))
        .filter(distance__lte=1 - min_similarity)
        .order_by("distance")[:limit]
    )
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            cursor.execute(f"SET LOCAL hnsw.ef_search = {tuning.HNSW_EF_SEARCH}")
        rows = sorted(nearest, key=lambda m: m.distance)  # relaxed order: sort exactly
        found.similar = [SimilarMemory(m, round(1 - float(m.distance), 4)) for m in rows]
    return found
