"""Reading a memory counts as an access (seed 001 §7): its read count and last read move,
and its priority is recomputed from them at once, so what people and agents open stays."""

from __future__ import annotations

from django.db import connection
from django.utils import timezone

from memories.forget.decay import PRIORITY_SQL

# The rows as they are after the read (alias ``m``, the columns PRIORITY_SQL reads), so the
# priority is computed from the new count and time in the same statement. FOR UPDATE: a
# read racing another waits for it and counts from its result (a plain subquery would read
# the count as it was before, and two reads would count once); by id, so reads of several
# memories lock them in one order.
_AFTER_READ = """
    SELECT id, type, pinned, base_priority, resolution, confidence, severity, details,
           occurred_at, access_count + 1 AS access_count,
           %(now)s::timestamptz AS last_accessed_at
    FROM memories_memory WHERE id = ANY(%(ids)s) AND status <> 'deleted'
    ORDER BY id FOR UPDATE
"""


def note_access(memory_ids: list[int]) -> None:
    if not memory_ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memories_memory t SET access_count = m.access_count,"
            f" last_accessed_at = m.last_accessed_at, priority = {PRIORITY_SQL}"
            f" FROM ({_AFTER_READ}) m WHERE t.id = m.id",
            {"now": timezone.now(), "ids": list(memory_ids)},
        )
