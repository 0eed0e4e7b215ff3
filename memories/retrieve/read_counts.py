"""Reading a memory counts as an access (docs/memories.md): one more read, the time of it, and
its priority recomputed with the read's boost.

What counts: opening one memory (the API's GET of it, ``related``, the UI's memory page),
the hits of a search by ``q`` (an agent asked for them by meaning: they are what it reads),
and the memories put into an agent's context. Browsing a filtered list, topics or the
timeline does not: paging through a project's memories would otherwise lift every one of
them and decay would mean nothing.

Two statements in one transaction: PostgreSQL evaluates a row's SET expressions on its old
values, so the priority is computed once the read is written. The first statement locks
the rows (in id order), so concurrent reads of a memory count one after the other.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection, transaction
from django.utils import timezone

from memories.decay import PRIORITY_SQL
from memories.models import Memory


def note_access(memory_ids: Iterable[int], now=None) -> dict[int, tuple]:
    """Count a read of each memory (deleted ones are left alone); returns, by id, the
    (access_count, last_accessed_at, priority) written."""
    ids = sorted(set(memory_ids))
    if not ids:
        return {}
    params = {"ids": ids, "now": now or timezone.now()}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memories_memory SET access_count = access_count + 1,"
            " last_accessed_at = %(now)s WHERE id IN ("
            "  SELECT id FROM memories_memory WHERE id = ANY(%(ids)s) AND status <> 'deleted'"
            "  ORDER BY id FOR UPDATE)",
            params,
        )
        cursor.execute(
            f"UPDATE memories_memory m SET priority = {PRIORITY_SQL}"
            " WHERE m.id = ANY(%(ids)s) AND m.status <> 'deleted'"
            " RETURNING m.id, m.access_count, m.last_accessed_at, m.priority",
            params,
        )
        return {row[0]: row[1:] for row in cursor.fetchall()}


def record_access(memories: Iterable[Memory], now=None) -> None:
    """``note_access`` for these objects, which are updated with what was written."""
    by_id = {memory.pk: memory for memory in memories}
    for pk, (count, last, priority) in note_access(by_id, now).items():
        memory = by_id[pk]
        memory.access_count, memory.last_accessed_at, memory.priority = count, last, priority
