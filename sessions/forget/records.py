"""Deletion records (seed 001 §8.3): every deletion leaves one, and it outlives the purge.

A record says who deleted what and why, how much (sessions, messages, bytes), and until when
it can be undone; never any content. One deletion that spans several projects (a filter over
a team) leaves one record per project, so each project's admins see their own.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from django.db.models import F
from django.utils import timezone

from sessions.models import DeletionRecord, Session

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
    """Record the deletion of ``sessions`` (with their ``project`` loaded), one record per
    project. ``messages``/``size`` override the sessions' own counts (a single removed
    message); a deletion that cannot be undone has no recovery deadline."""
    now = timezone.now()
    by_project: dict[int, list[Session]] = {}
    for session in sessions:
        by_project.setdefault(session.project_id, []).append(session)
    records = []
    for group in by_project.values():
        project = group[0].project
        records.append(
            DeletionRecord(
                team_id=project.team_id,
                project=project,
                project_label=str(project),
                scope=scope,
                criteria=criteria or {},
                session_ids=[s.public_id for s in group],
                deleted_by=by if getattr(by, "pk", None) is not None else None,
                actor=actor_label(by),
                reason=reason[:500],
                sessions=len(group),
                messages=sum(s.message_count for s in group) if messages is None else messages,
                bytes=sum(s.size_bytes for s in group) if size is None else size,
                recovery_deadline=now + timedelta(days=project.trash_days) if recoverable else None,
            )
        )
    return DeletionRecord.objects.bulk_create(records)


def note_restored(public_ids: Iterable[str]) -> None:
    """These sessions came back from the trash: their records count them as restored."""
    for public_id in public_ids:
        DeletionRecord.objects.filter(
            session_ids__contains=[public_id], purged_at__isnull=True
        ).update(restored_sessions=F("restored_sessions") + 1)


def note_purged(public_ids: list[str]) -> None:
    """These sessions are gone for good: their records say when."""
    if public_ids:
        DeletionRecord.objects.filter(session_ids__overlap=public_ids).update(
            purged_at=timezone.now()
        )
