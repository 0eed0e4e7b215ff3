"""Retention: a project's sessions past its ``retention_days`` move to the trash by the daily
run, and from there are purged after its ``trash_days`` like any deleted session.

A session's age is counted from its **last activity**: the later of when it ended (or, with
no end, started) and when it was last written to (captured, appended to, edited). An agent
that appends messages without timestamps never moves ``ended_at``, so counting from the end
alone would trash a session that is still in use; counting from the last write keeps it, and
an old transcript imported today is kept ``retention_days`` from its import (and a session
restored from the trash, from its restore). Reading a
session does not make it younger: retention is about how old the data is, not how popular
(decay and archiving are what reads influence).

The run moves sessions per project, in batches of ``BATCH`` per transaction, with the
project's advisory lock held: an overlapping run skips a project another run is working on,
and each move is a conditional update (``lifecycle.trash_locked``), so no session moves
twice. Each project's run leaves one deletion record, grown batch by batch in the same
transaction as the moves, so a run that dies half-way still accounts for what it moved.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import connection, models, transaction
from django.db.models import Count, F, Func, Q, QuerySet, Sum, Value
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from sessions.forget.lifecycle import trash_locked
from sessions.forget.records import record_deletion
from sessions.models import DeletionRecord, DeletionScope, Session
from teams.models import Project

logger = logging.getLogger(__name__)

# Sessions moved per transaction: their rows stay locked until it commits.
BATCH = 2000
# A policy change that would remove more than this share (percent) of a project's sessions
# must be confirmed.
CONFIRM_ABOVE_PERCENT = 10
# Session-level advisory locks (RETENTION_LOCK_SPACE, project id): one run per project.
RETENTION_LOCK_SPACE = 0x726574  # "ret"
# The beat entry whose schedule says when the next run is.
BEAT_ENTRY = "enforce-retention"

LAST_ACTIVITY = Greatest(Coalesce("ended_at", "started_at"), "updated_at")


def _past_retention(days: int, now: datetime) -> Q:
    # On a queryset with the ``last_activity`` alias.
    return Q(deleted_at__isnull=True, last_activity__lt=now - timedelta(days=days))


def past_retention(sessions: QuerySet, days: int, now: datetime) -> QuerySet:
    """The live ones of ``sessions`` whose last activity is more than ``days`` before ``now``."""
    return sessions.alias(last_activity=LAST_ACTIVITY).filter(_past_retention(days, now))


def next_run(now: datetime | None = None) -> datetime:
    """When the beat schedule runs retention next after ``now`` (``now`` itself when it is not
    scheduled by time of day)."""
    now = now or timezone.now()
    schedule = settings.CELERY_BEAT_SCHEDULE.get(BEAT_ENTRY, {}).get("schedule")
    if not hasattr(schedule, "remaining_delta"):
        return now
    # The first time after ``now`` the crontab fires (as if it had last run at ``now``).
    start, delta, _ = schedule.remaining_delta(now)
    return start + delta


@dataclass(frozen=True)
class RetentionPlan:
    """What a run with ``days`` of retention and ``trash_days`` of trash would do at ``at``."""

    project_id: int
    days: int | None
    trash_days: int
    at: datetime
    live_sessions: int
    sessions: int  # live sessions it moves to the trash
    messages: int
    bytes: int
    purge_sessions: int  # trashed sessions past the trash window, purged for good
    purge_messages: int
    purge_bytes: int
    all_sessions: int  # live and trashed

    confirm_above = CONFIRM_ABOVE_PERCENT

    @property
    def percent(self) -> float:
        """Share of the project's live sessions it moves to the trash."""
        return 100 * self.sessions / self.live_sessions if self.live_sessions else 0.0

    @property
    def purge_percent(self) -> float:
        """Share of all the project's sessions (live and trashed) it purges."""
        return 100 * self.purge_sessions / self.all_sessions if self.all_sessions else 0.0

    @property
    def needs_confirmation(self) -> bool:
        return max(self.percent, self.purge_percent) > CONFIRM_ABOVE_PERCENT

    def summary(self) -> str:
        """One sentence a person can act on (the admin's confirmation asks with it)."""
        moved = (
            f"move {self.sessions:,} of {_count(self.live_sessions, 'live session')} "
            f"({self.percent:.1f} %; {_count(self.messages, 'message')}, {_size(self.bytes)}) "
            "to the trash"
            if self.days
            else "move nothing to the trash (no retention)"
        )
        purged = (
            f"purge {_count(self.purge_sessions, 'trashed session')} for good "
            f"({_count(self.purge_messages, 'message')}, {_size(self.purge_bytes)})"
        )
        return f"The run of {self.at:%Y-%m-%d %H:%M} UTC would {moved} and {purged}."

    def as_json(self) -> dict:
        data = asdict(self)
        data["at"] = self.at.isoformat()
        data["percent"] = round(self.percent, 2)
        data["purge_percent"] = round(self.purge_percent, 2)
        data["needs_confirmation"] = self.needs_confirmation
        return data


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    return ""  # unreachable


def retention_plan(
    project: Project, days: int | None, now: datetime | None = None, trash_days: int | None = None
) -> RetentionPlan:
    """What retention of ``days`` (None: none) and a trash of ``trash_days`` (default: the
    project's) would remove at ``now``: one aggregate query, no session loaded."""
    now = now or timezone.now()
    trash_days = trash_days or project.trash_days
    sessions = Session.objects.filter(project=project, team_id=project.team_id).alias(
        last_activity=LAST_ACTIVITY
    )
    live = Q(deleted_at__isnull=True)
    due = _past_retention(days, now) if days else Q(pk__in=[])
    # The trash window as the purge computes it (deleted_at + trash days <= now).
    purge = Q(deleted_at__lte=now - timedelta(days=trash_days))
    totals = sessions.aggregate(
        live=Count("id", filter=live),
        all=Count("id"),
        sessions=Count("id", filter=due),
        messages=Sum("message_count", filter=due),
        bytes=Sum("size_bytes", filter=due),
        purge_sessions=Count("id", filter=purge),
        purge_messages=Sum("message_count", filter=purge),
        purge_bytes=Sum("size_bytes", filter=purge),
    )
    return RetentionPlan(
        project_id=project.pk,
        days=days,
        trash_days=trash_days,
        at=now,
        live_sessions=totals["live"],
        sessions=totals["sessions"],
        messages=totals["messages"] or 0,
        bytes=totals["bytes"] or 0,
        purge_sessions=totals["purge_sessions"],
        purge_messages=totals["purge_messages"] or 0,
        purge_bytes=totals["purge_bytes"] or 0,
        all_sessions=totals["all"],
    )


@contextmanager
def _project_lock(project_id: int):
    """True while this connection holds the project's retention lock; False when another
    run holds it (that run moves the project's sessions)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [RETENTION_LOCK_SPACE, project_id])
        held = cursor.fetchone()[0]
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_unlock(%s, %s)", [RETENTION_LOCK_SPACE, project_id]
                )


def _grow(record: DeletionRecord, moved: list[Session]) -> None:
    """Add a later batch's sessions to the run's record."""
    DeletionRecord.objects.filter(pk=record.pk).update(
        sessions=F("sessions") + len(moved),
        messages=F("messages") + sum(s.message_count for s in moved),
        bytes=F("bytes") + sum(s.size_bytes for s in moved),
        session_ids=Func(
            F("session_ids"),
            Value([s.public_id for s in moved], output_field=ArrayField(models.CharField())),
            function="array_cat",
            output_field=ArrayField(models.CharField()),
        ),
    )


def enforce_project(project: Project, now: datetime) -> dict:
    """Move the project's sessions past its retention to the trash; what it moved."""
    days = project.retention_days
    done = {"project": str(project), "sessions": 0, "messages": 0, "bytes": 0, "skipped": False}
    with _project_lock(project.pk) as held:
        if not held:
            done["skipped"] = True
            return done
        due = past_retention(Session.objects.filter(project=project), days, now).order_by("pk")
        reason = f"retention: older than {days} days"
        cutoff = now - timedelta(days=days)
        criteria = {"retention_days": days, "last_activity_before": cutoff.isoformat()}
        record, last = None, 0
        while pks := list(due.filter(pk__gt=last).values_list("pk", flat=True)[:BATCH]):
            last = pks[-1]
            with transaction.atomic():
                moved = trash_locked(due.filter(pk__in=pks), reason=reason, now=now)
                if not moved:
                    continue
                for session in moved:
                    session.project = project
                if record is None:
                    [record] = record_deletion(
                        moved, DeletionScope.RETENTION, reason=reason, criteria=criteria
                    )
                else:
                    _grow(record, moved)
            done["sessions"] += len(moved)
            done["messages"] += sum(s.message_count for s in moved)
            done["bytes"] += sum(s.size_bytes for s in moved)
    return done


def enforce_retention(now: datetime | None = None) -> dict:
    """Every project with a retention: its sessions past it move to the trash. Returns a
    JSON-able summary (per project that moved anything, and the totals)."""
    now = now or timezone.now()
    projects = Project.objects.filter(retention_days__isnull=False).select_related("team")
    runs = [enforce_project(project, now) for project in projects.order_by("pk")]
    moved = [run for run in runs if run["sessions"] or run["skipped"]]
    summary = {
        "projects": len(runs),
        "sessions": sum(run["sessions"] for run in runs),
        "messages": sum(run["messages"] for run in runs),
        "bytes": sum(run["bytes"] for run in runs),
        "moved": moved,
    }
    return summary
