"""Per-project readable ids: DEC-001, FIND-002, PREF-003 … (docs/memories.md)."""

from __future__ import annotations

from django.db import connection

from memories.models import ID_PREFIX
from teams.models import Project

DIGITS = 3  # DEC-001; past 999 the number simply grows (DEC-1000)


def next_public_id(project: Project, kind: str) -> str:
    """The next free id of ``kind`` in ``project``. One upsert: concurrent writers each get
    their own number (the counter row is locked until their transaction ends)."""
    prefix = ID_PREFIX[kind]
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO memories_memorycounter (project_id, prefix, last) VALUES (%s, %s, 1)
            ON CONFLICT (project_id, prefix)
            DO UPDATE SET last = memories_memorycounter.last + 1
            RETURNING last
            """,
            [project.pk, prefix],
        )
        number = cursor.fetchone()[0]
    return f"{prefix}-{number:0{DIGITS}d}"


def note_used(project: Project, public_id: str) -> None:
    """An imported id (DEC-007) was kept: later numbers start after it."""
    prefix, _, number = public_id.partition("-")
    if prefix not in ID_PREFIX.values() or not number.isdigit():
        return
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO memories_memorycounter (project_id, prefix, last) VALUES (%s, %s, %s)
            ON CONFLICT (project_id, prefix)
            DO UPDATE SET last = greatest(memories_memorycounter.last, EXCLUDED.last)
            """,
            [project.pk, prefix, int(number)],
        )
