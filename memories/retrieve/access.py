"""Reading a memory counts as an access (seed 001 §7): its count goes up, its last access
is now, and its priority is recomputed from them at once, not at the next decay run."""

from __future__ import annotations

from django.db import connection
from django.utils import timezone

from memories.forget.decay import PRIORITY_SQL


def note_access(memory_ids: list[int]) -> None:
    """One UPDATE for all of ``memory_ids``. ``PRIORITY_SQL`` reads the row as ``m``: here
    ``m`` is the row as it will be (count + 1, read now), so the priority is the new one."""
    ids = sorted(set(memory_ids))
    if not ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memories_memory t SET access_count = m.access_count,"
            f" last_accessed_at = m.last_accessed_at, priority = {PRIORITY_SQL}"
            " FROM (SELECT id, type, pinned, base_priority, confidence, severity, resolution,"
            " details, occurred_at, access_count + 1 AS access_count,"
            " %(now)s::timestamptz AS last_accessed_at"
            " FROM memories_memory WHERE id = ANY(%(ids)s)) m"
            " WHERE t.id = m.id",
            {"now": timezone.now(), "ids": ids},
        )
