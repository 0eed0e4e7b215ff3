"""Forgetting, reversibly: soft delete into the trash, restore, and purge (docs/operations.md,
"Retention and the trash"; docs/api.md, "Deleting").

State changes are conditional updates that check the row count, so two people deleting the
same session at once cannot both "win", and deleting what is already deleted is reported,
not repeated.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import DateTimeField, DurationField, ExpressionWrapper, F, QuerySet, Value
from django.utils import timezone

from core.error_codes import ErrorCode
from core.errors import DomainError
from sessions import derived
from sessions.forget.records import last_actor, note_purged, note_restored, record_deletion
from sessions.models import DeletionScope, Session

logger = logging.getLogger(__name__)


class LifecycleConflict(DomainError):
    """The session (or message) is not in the state the action needs (e.g. already in the
    trash). ``state`` says which state it is in, for the API's 409 body."""

    status = 409
    code = ErrorCode.CONFLICT

    def __init__(self, message: str, state: dict | None = None):
        super().__init__(message)
        self.state = state or {}

    def body(self) -> dict:
        return {**super().body(), **self.state}  # the state it is in (in the trash, since…)


def _iso(moment) -> str | None:
    return moment.isoformat() if moment is not None else None


def in_trash_state(session: Session) -> dict:
    """What a 409 says about a session in the trash: since when, by whom, until when."""
    return {
        "state": "in_trash",
        "deleted_at": _iso(session.deleted_at),
        "deleted_by": last_actor(session.public_id),
        "recovery_deadline": _iso(recovery_deadline(session)),
    }


ALIVE_STATE = {"state": "alive"}


def recovery_deadline(session: Session):
    if session.deleted_at is None:
        return None
    return session.deleted_at + timedelta(days=session.project.trash_days)


def soft_delete(session: Session, *, by=None, reason: str = "", record: bool = True) -> Session:
    """Move ``session`` to the trash, as ``by`` (a user, a token principal, or None for a
    policy), with a deletion record of scope "session" in the same transaction. A bulk
    deletion passes ``record=False`` and records all its sessions at once."""
    with transaction.atomic():
        changed = Session.objects.filter(pk=session.pk, deleted_at__isnull=True).update(
            deleted_at=timezone.now(),
            deleted_by=by if getattr(by, "pk", None) else None,
            delete_reason=reason[:500],
        )
        session.refresh_from_db(
            fields=["deleted_at", "deleted_by", "delete_reason", "message_count", "size_bytes"]
        )
        if changed:
            derived.trashed([session.pk])
        if changed and record:
            record_deletion([session], DeletionScope.SESSION, by=by, reason=reason)
    if not changed:
        raise LifecycleConflict(
            f"session {session.public_id} is already in the trash (since "
            f"{session.deleted_at:%Y-%m-%d %H:%M} UTC, restorable until "
            f"{recovery_deadline(session):%Y-%m-%d})",
            in_trash_state(session),
        )
    logger.info("session %s moved to the trash by %s", session.public_id, by or "an agent")
    return session


def restore(session: Session) -> Session:
    # A restore counts as activity (updated_at), so retention keeps what was just brought back.
    with transaction.atomic():
        changed = Session.objects.filter(pk=session.pk, deleted_at__isnull=False).update(
            deleted_at=None, deleted_by=None, delete_reason="", updated_at=timezone.now()
        )
        if changed:
            derived.restored([session.pk])
            note_restored([session.public_id])
    if not changed:
        raise LifecycleConflict(f"session {session.public_id} is not in the trash", ALIVE_STATE)
    session.refresh_from_db(fields=["deleted_at", "deleted_by", "delete_reason"])
    logger.info("session %s restored from the trash", session.public_id)
    return session


def purge(session: Session) -> None:
    """Delete for good a session that is in the trash (messages, vectors, entities with it)."""
    if not _purge([session.pk]):
        raise LifecycleConflict(
            f"session {session.public_id} is not in the trash; delete it before purging",
            ALIVE_STATE,
        )
    logger.info("session %s purged", session.public_id)


# The purge of expired trash deletes this many sessions per transaction: each holds their
# rows locked while their messages, vectors and entities go, so it must stay short.
PURGE_BATCH = 500
# … and, past the first session of a batch, no more than this many messages: rows of other
# tables point at messages (chunks, entities, memory evidence), so Django's delete loads
# every message of the batch into the process to find them, about 1 KB each; 500 sessions
# of 1,000 messages would be half a GB (docs/benchmark-log.md, "Forgetting at scale: the fixes").
PURGE_BATCH_MESSAGES = 20_000


def past_trash_window(sessions: QuerySet, now) -> QuerySet:
    """The trashed ones of ``sessions`` whose project's recovery window has passed at ``now``:
    a condition in SQL (joined to the project's trash days), so no session is loaded to
    decide."""
    window = ExpressionWrapper(
        F("project__trash_days") * Value(timedelta(days=1)), output_field=DurationField()
    )
    cutoff = ExpressionWrapper(Value(now) - window, output_field=DateTimeField())
    return sessions.in_trash().filter(deleted_at__lte=cutoff)


def purge_expired(now=None) -> int:
    """Purge every trashed session past its project's recovery window, in batches of
    ``PURGE_BATCH`` sessions and about ``PURGE_BATCH_MESSAGES`` messages (by id, so a batch
    someone restored meanwhile is not retried); returns how many."""
    expired = past_trash_window(Session.objects.all(), now or timezone.now()).order_by("pk")
    purged, last = 0, 0
    while rows := list(
        expired.filter(pk__gt=last).values_list("pk", "message_count")[:PURGE_BATCH]
    ):
        pks, messages = [], 0
        for pk, count in rows:
            if pks and messages + count > PURGE_BATCH_MESSAGES:
                break
            pks.append(pk)
            messages += count
        last = pks[-1]
        purged += _purge(pks)  # (their deletion records are marked purged there)
    return purged


def trash_locked(sessions: QuerySet, *, by=None, reason: str = "", now=None) -> list[Session]:
    """Move the live ones of ``sessions`` to the trash in one statement, inside the caller's
    transaction; returns those it moved (id, public id, project, message count, size).

    They are locked first, in id order; PostgreSQL checks the queryset's conditions again on
    each locked row, so a session someone else trashed, or one that changed so it no longer
    matches (new messages under a retention rule), is left alone: two runs never move a
    session twice."""
    locked = list(
        sessions.alive()
        .order_by("pk")
        .select_for_update(of=("self",))
        .only("id", "public_id", "project_id", "message_count", "size_bytes")
    )
    if locked:
        Session.objects.filter(pk__in=[s.pk for s in locked]).update(
            deleted_at=now or timezone.now(),
            deleted_by=by if getattr(by, "pk", None) else None,
            delete_reason=reason[:500],
        )
        derived.trashed([s.pk for s in locked])
    return locked


def _purge(pks: list[int]) -> int:
    """Delete these trashed sessions and everything of theirs; returns how many.

    The session rows are locked ``FOR UPDATE`` first, in id order: that waits for anyone
    writing a child row of theirs (a capture, the embedding worker's chunks, an enrichment's
    entities all hold the session ``KEY SHARE`` or stronger while they write) and keeps new
    ones out, so the children Django collects are all there are. Their deletion records stay,
    marked purged.
    """
    with transaction.atomic():
        locked = dict(
            Session.objects.filter(pk__in=pks, deleted_at__isnull=False)
            .order_by("pk")
            .select_for_update()
            .values_list("pk", "public_id")
        )
        if not locked:
            return 0
        note_purged(locked.values())
        derived.purging(list(locked))
        return Session.objects.filter(pk__in=locked).delete()[1].get("agent_sessions.Session", 0)
