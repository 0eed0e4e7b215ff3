"""Which diary days must be distilled again, and distilling them (docs/people.md: the diary follows
its logs).

A day's entries are made from that day's sessions and memories (``distill.py``). When that
material changes after the day was distilled (a late or imported session, a session trashed,
restored, purged or anonymised, a message removed, a memory recorded, deleted or restored),
the day is marked due (``DiaryDue``) and the beat task ``memories.tasks.distill_diaries``
distils every marked day, not only yesterday and today.

Erasure does not wait for that: the entries that name an erased session or memory are
deleted in the erasure's own transaction (``forget_entries``), and the day's re-distillation
writes them again from what is left.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta

from django.db import transaction
from django.db.models import Q

from memories.diary.models import DiaryDue, DiaryEntry

logger = logging.getLogger(__name__)

# A session belongs to every day from its start to its end; one left open for years is not
# a reason to distil years of diaries.
MAX_DAYS_PER_SESSION = 62


def days_between(started_at: datetime, ended_at: datetime | None) -> list[date]:
    """The UTC days a session was active on (``distill.distill_day``'s rule)."""
    first = started_at.astimezone(UTC).date()
    last = ended_at.astimezone(UTC).date() if ended_at else first
    if last < first:
        return [first]
    count = min((last - first).days, MAX_DAYS_PER_SESSION)
    return [first + timedelta(days=n) for n in range(count + 1)]


def mark(team_days: Iterable[tuple[int, date]]) -> int:
    """Mark these (team, day) pairs due; returns how many pairs."""
    pairs = sorted(set(team_days))
    if not pairs:
        return 0
    DiaryDue.objects.bulk_create(
        [DiaryDue(team_id=team_id, day=day) for team_id, day in pairs],
        update_conflicts=True,
        unique_fields=["team", "day"],
        update_fields=["marked_at"],
    )
    return len(pairs)


def mark_sessions(session_ids: Iterable[int]) -> int:
    """Mark the days of these sessions (rows still in the database)."""
    from sessions.models import Session

    rows = Session.objects.filter(pk__in=list(session_ids)).values_list(
        "team_id", "started_at", "ended_at"
    )
    return mark((team, day) for team, start, end in rows for day in days_between(start, end))


def mark_late(sessions) -> int:
    """Mark the past days of sessions (rows) that got new messages (imported, or captured
    late): the daily run distils yesterday and today only once today is over. No query
    for a session of today."""
    today = datetime.now(UTC).date()
    return mark(
        (session.team_id, day)
        for session in sessions
        for day in days_between(session.started_at, session.ended_at)
        if day < today
    )


def mark_memories(memories) -> int:
    """Mark the days of these memories (``Memory`` rows): the day each was said, and its
    session's days (an entry lists the memories of the day's sessions)."""
    pairs, session_ids = set(), set()
    for memory in memories:
        pairs.add((memory.team_id, memory.occurred_at.astimezone(UTC).date()))
        if memory.session_id:
            session_ids.add(memory.session_id)
    return mark(pairs) + (mark_sessions(session_ids) if session_ids else 0)


def forget_entries(*, session_public_ids: Iterable[str] = (), people=()) -> list[tuple]:
    """Delete now the entries that list one of these sessions, or that are of one of these
    (project id, person) pairs; their days are marked due so what is left is distilled
    again. Returns the (team, day) pairs marked."""
    ids, people = list(session_public_ids), list(people)
    if not ids and not people:
        return []
    condition = Q(sessions__overlap=ids) if ids else Q()
    for project_id, person in people:
        condition |= Q(project_id=project_id, person=person)
    entries = DiaryEntry.objects.filter(condition)
    pairs = list(entries.values_list("team_id", "day").distinct())
    entries.delete()
    mark(pairs)
    return pairs


def due_days(limit: int | None = None) -> list[DiaryDue]:
    rows = DiaryDue.objects.order_by("day", "team_id")
    return list(rows[:limit] if limit else rows)


def distill_due(*, limit: int | None = None, progress=None) -> dict[str, int]:
    """Distil every marked day (oldest first); a day marked again while it was being
    distilled stays marked. ``progress(done, total)`` after each. Returns entries per day."""
    from memories.diary.distill import distill_day

    due = due_days(limit)
    written: dict[str, int] = {}
    for done, row in enumerate(due, 1):
        count = distill_day(row.day, team_id=row.team_id)
        with transaction.atomic():
            DiaryDue.objects.filter(pk=row.pk, marked_at=row.marked_at).delete()
        key = row.day.isoformat()
        written[key] = written.get(key, 0) + count
        if progress is not None:
            progress(done, len(due))
    if due:
        logger.info("diaries: %d marked day(s) distilled again", len(due))
    return written
