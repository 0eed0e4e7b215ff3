"""Reading a memory counts as an access (seed 001 §7): one more read, the time of it, and
its priority recomputed with the read's boost.

What counts: opening one memory (the API's GET of it, ``related``), and the hits of a search
by ``q`` (an agent asked for them by meaning: they are what it reads). Browsing a filtered
list, topics or the timeline does not: paging through a project's memories would otherwise
lift every one of them and decay would mean nothing.

Two statements in one transaction: PostgreSQL evaluates a row's SET expressions on its old
values, so the priority is computed once the read is written.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection, transaction
from django.utils import timezone

from memories.forget.decay import PRIORITY_SQL
from memories.models import Memory


def record_access(memories: Iterable[Memory], now=None) -> None:
    """Count a read of each of ``memories`` (deleted ones are left alone) and update the
    objects given with what was written."""
    by_id = {memory.pk: memory for memory in memories}
    if not by_id:
        return
    now = now or timezone.now()
    params = {"ids": list(by_id), "now": now}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memories_memory SET access_count = access_count + 1,"
            " last_accessed_at = %(now)s WHERE id = ANY(%(ids)s) AND status <> 'deleted'",
            params,
        )
        cursor.execute(
            f"UPDATE memories_memory m SET priority = {PRIORITY_SQL}"
            " WHERE m.id = ANY(%(ids)s) AND m.status <> 'deleted'"
            " RETURNING m.id, m.access_count, m.last_accessed_at, m.priority",
            params,
        )
        for pk, count, last, priority in cursor.fetchall():
            memory = by_id[pk]
            memory.access_count, memory.last_accessed_at, memory.priority = count, last, priority
