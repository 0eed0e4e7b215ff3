"""Deletion records (docs/api.md, "Deleting"): every deletion leaves one, and it outlives the purge.

A record says who deleted what and why, how much (sessions, messages, bytes), and until when
it can be undone; never any content. One deletion that spans several projects (a filter over
a team) leaves one record per project, so each project's admins see their own.

Callers write records in the transaction of the change they describe, so a deletion that
rolls back leaves no record, and one that commits always has one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import fields
from datetime import date, datetime, timedelta

from django.db.models import F
from django.utils import timezone

from sessions.models import DeletionRecord, DeletionScope, Session
from teams.models import Project, Role

# Who deleted, when no person or token did.
POLICY_ACTOR = "retention policy"


def actor_label(by) -> str:
    """How a record names ``by``: a user's username, a token (``token mem_ab12…``), or the
    policy when nobody is given."""
    if by is None:
        return POLICY_ACTOR
    if getattr(by, "pk", None) is not None:
        return by.get_username()
    return str(by)


def criteria_of(filters) -> dict:
    """A ``sessions.filters.Filters`` as a record keeps it: the filters that were set, times
    as ISO 8601 (filter values only: they name what was deleted, they hold none of it)."""
    criteria = {}
    for field in fields(filters):
        value = getattr(filters, field.name)
        if value in (None, "", ()) or value is False:  # not set
            continue
        if isinstance(value, datetime | date):
            value = value.isoformat()
        elif isinstance(value, tuple):
            value = list(value)
        criteria[field.name] = value
    return criteria


def per_project(rows: Iterable) -> list[tuple[Project, list]]:
    """``rows`` (with ``project_id``) grouped by their project, the projects (with their
    team) read in one query: a deletion record is written per project."""
    by_project: dict[int, list] = {}
    for row in rows:
        by_project.setdefault(row.project_id, []).append(row)
    projects = Project.objects.select_related("team").in_bulk(list(by_project))
    return [(projects[project_id], group) for project_id, group in by_project.items()]


def record_deletion(
    sessions: Iterable[Session],
    scope: str,
    *,
    by=None,
    reason: str = "",
    criteria: dict | None = None,
    messages: int | None = None,
    size: int | None = None,
    recoverable: bool = True,
) -> list[DeletionRecord]:
    """Record the deletion of ``sessions``, one record per project (read here, in one
    query). ``messages``/``size`` override the sessions' own counts (a single removed
    message); a deletion that cannot be undone has no recovery deadline."""
    now = timezone.now()
    records = []
    for project, group in per_project(sessions):
        records.append(
            DeletionRecord(
                team_id=project.team_id,
                project=project,
                project_label=str(project),
                scope=scope,
                criteria=criteria or {},
                session_ids=[s.public_id for s in group],
                deleted_by=by if getattr(by, "pk", None) is not None else None,
                actor=actor_label(by)[:200],
                reason=reason[:500],
                sessions=len(group),
                messages=sum(s.message_count for s in group) if messages is None else messages,
                bytes=sum(s.size_bytes for s in group) if size is None else size,
                recovery_deadline=now + timedelta(days=project.trash_days) if recoverable else None,
            )
        )
    return DeletionRecord.objects.bulk_create(records)


def _latest_records(public_ids: Iterable[str]) -> Counter:
    """Record id → how many of ``public_ids`` it is the latest trash record of (a session
    deleted, restored and deleted again has two; only the last one moved it this time).
    Removed-message records are not about the session's place in the trash."""
    wanted = set(public_ids)
    latest: dict[str, int] = {}
    candidates = (
        DeletionRecord.objects.filter(session_ids__overlap=list(wanted))
        .exclude(scope=DeletionScope.MESSAGE)
        .order_by("-created_at", "-id")
        .values_list("id", "session_ids")
    )
    for record_id, ids in candidates:
        for public_id in wanted.intersection(ids):
            latest.setdefault(public_id, record_id)
    return Counter(latest.values())


def note_restored(public_ids: Iterable[str]) -> None:
    """These sessions came back from the trash: their records count them as restored."""
    for record_id, count in _latest_records(public_ids).items():
        DeletionRecord.objects.filter(pk=record_id).update(
            restored_sessions=F("restored_sessions") + count
        )


def last_actor(public_id: str) -> str:
    """Who last moved this session to the trash, as its latest record names them ("" if no
    record does)."""
    return (
        DeletionRecord.objects.filter(session_ids__contains=[public_id])
        .exclude(scope=DeletionScope.MESSAGE)
        .order_by("-created_at", "-id")
        .values_list("actor", flat=True)
        .first()
        or ""
    )


def note_purged(public_ids: Iterable[str]) -> None:
    """These sessions are gone for good: the records that moved them to the trash say when."""
    records = list(_latest_records(public_ids))
    if records:
        DeletionRecord.objects.filter(pk__in=records).update(purged_at=timezone.now())


def record_state(record: DeletionRecord) -> str:
    """Where what a record deleted is now: removed (a message: for good at once), purged,
    restored, partly_restored, or in_trash."""
    if record.scope == DeletionScope.MESSAGE:
        return "removed"
    if record.purged_at is not None:
        return "purged"
    # A record of memories counts memories (its sessions are 0).
    memories = record.scope == DeletionScope.MEMORY
    total = record.memories if memories else record.sessions
    restored = record.restored_memories if memories else record.restored_sessions
    if restored >= total:
        return "restored"
    return "partly_restored" if restored else "in_trash"


def admin_records(access, records=None):
    """The deletion records ``access`` (a ``teams.access.Access``) may list: those of the
    teams it is an admin of (within its scope), or None when it is an admin of none."""
    admin = access.where_can(Role.ADMIN)
    if not admin.team_ids:
        return None
    return admin.scope(DeletionRecord.objects.all() if records is None else records)
