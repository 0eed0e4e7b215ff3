"""Deleted memories: a trash with the project's recovery window, then the daily purge
(docs/memories.md). The one home of deleting and restoring a memory, for the API, the web
pages, MCP and the CLI.

- ``delete`` (one memory) and ``delete_many`` (a filter's matches, at most ``MAX_BULK`` per
  call) mark memories deleted, with who and why, and leave a deletion record
  (``memories/forget/records.py``) in the same transaction; their diary days are marked due,
  so diaries are distilled again without them.
- ``restore`` brings one back until its recovery deadline (deleted_at + the project's
  ``trash_days``, as for sessions); after it, ``RecoveryWindowPassed`` (a 409 naming
  ``recovery_deadline``), even if the daily purge has not run yet.
- ``purge_expired`` (the daily purge, through ``memories/derived.py``) deletes for
  good what is past its window; the deletion records stay, marked purged.

State changes are conditional on the row's state (deleted or not), so two overlapping
requests cannot both delete or both restore a memory.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import DateTimeField, DurationField, ExpressionWrapper, F, QuerySet, Value
from django.utils import timezone

from core.error_codes import ErrorCode
from memories.capture.record import InvalidMemory, MemoryConflict
from memories.capture.status import note, note_many
from memories.decay import priority_of
from memories.diary import due
from memories.forget.records import (
    note_memories_purged,
    note_memories_restored,
    record_memory_deletion,
)
from memories.models import LinkKind, Memory, MemoryLink, MemoryStatus
from sessions.models import DeletionRecord

logger = logging.getLogger(__name__)

PURGE_BATCH = 1000
# One bulk delete marks at most this many memories: they are locked and changed in one
# transaction, which must stay short. A larger match is refused, to be narrowed.
MAX_BULK = 2000
# How many of a bulk delete's matches a dry run shows.
SAMPLE_SIZE = 10
# The columns a deletion needs: its record (project, readable id, type) and the diary days.
TRASH_COLUMNS = ("pk", "public_id", "project_id", "team_id", "type", "occurred_at", "session_id")


class RecoveryWindowPassed(MemoryConflict):
    """The memory's recovery deadline has passed: it waits for the purge, it cannot come
    back."""

    code = ErrorCode.RECOVERY_WINDOW_PASSED


class TooManyToDelete(InvalidMemory):
    """More than ``MAX_BULK`` memories match a bulk delete."""

    def __init__(self, count: int):
        super().__init__(
            f"{count} memories match; at most {MAX_BULK} are deleted at a time. Narrow the "
            "filters (since/until, say) and delete in steps.",
            "non_field_errors",
        )
        self.count = count


def recovery_deadline(memory: Memory):
    """Until when a deleted memory can be restored (None when it is not deleted)."""
    if memory.deleted_at is None:
        return None
    return memory.deleted_at + timedelta(days=memory.project.trash_days)


def past_window(memories, now):
    """The deleted ones of ``memories`` whose project's recovery window has passed."""
    window = ExpressionWrapper(
        F("project__trash_days") * Value(timedelta(days=1)), output_field=DurationField()
    )
    cutoff = ExpressionWrapper(Value(now) - window, output_field=DateTimeField())
    return memories.filter(status=MemoryStatus.DELETED, deleted_at__lte=cutoff)


def in_trash(memories):
    """The deleted ones of ``memories``, newest deletion first."""
    return memories.filter(status=MemoryStatus.DELETED).order_by("-deleted_at", "-id")


def _reason(reason: str) -> str:
    if not (reason or "").strip():
        raise InvalidMemory("Say why the memory is deleted.", "reason")
    return reason.strip()[:500]


def _mark_deleted(pks: list[int], *, by, reason: str) -> int:
    """Mark these memories deleted, those not deleted already, keeping each change in its
    history; returns how many."""
    alive = Memory.objects.filter(pk__in=pks).exclude(status=MemoryStatus.DELETED)
    before = list(alive.select_for_update(of=("self",)).only("pk", "team_id", "status"))
    if not before:
        return 0
    note_many(before, None, MemoryStatus.DELETED, by=by, reason=reason)
    return Memory.objects.filter(pk__in=[m.pk for m in before]).update(
        status=MemoryStatus.DELETED,
        deleted_at=timezone.now(),
        deleted_by=by if getattr(by, "pk", None) is not None else None,
        delete_reason=reason,
        updated_at=timezone.now(),
    )


def delete(memory: Memory, *, by=None, reason: str) -> Memory:
    """Move ``memory`` to the trash as ``by`` (a user, a token principal, or None), with a
    deletion record; 409 when it already is there."""
    reason = _reason(reason)
    with transaction.atomic():
        if not _mark_deleted([memory.pk], by=by, reason=reason):
            memory.refresh_from_db(fields=["deleted_at", "delete_reason"])
            raise MemoryConflict(
                f"{memory.public_id} is already deleted (on {memory.deleted_at:%Y-%m-%d %H:%M} "
                f"UTC: {memory.delete_reason}).",
                state="deleted",
                recovery_deadline=recovery_deadline(memory).isoformat(),
            )
        memory.refresh_from_db(fields=["status", "deleted_at", "deleted_by", "delete_reason"])
        due.mark_memories([memory])
        record_memory_deletion([memory], by=by, reason=reason)
    logger.info("memory %s deleted by %s", memory.public_id, by or "an agent")
    return memory


def restore(memory: Memory, *, by=None) -> Memory:
    """Bring a deleted memory back before its recovery deadline: superseded again if a
    newer memory still supersedes it, else active. 409 when it is not deleted, or when the
    deadline has passed (``RecoveryWindowPassed``, naming it)."""
    with transaction.atomic():
        current = Memory.objects.select_for_update(of=("self",)).select_related("project")
        current = current.get(pk=memory.pk)
        if current.status != MemoryStatus.DELETED:
            raise MemoryConflict(
                f"{current.public_id} is not deleted (it is {current.status}).",
                state=str(current.status),
            )
        deadline = recovery_deadline(current)
        if deadline <= timezone.now():
            raise RecoveryWindowPassed(
                f"{current.public_id} cannot be restored: its recovery deadline "
                f"({deadline:%Y-%m-%d %H:%M} UTC, {current.project.trash_days} days after it "
                "was deleted) has passed, and the daily purge deletes it for good.",
                state="deleted",
                recovery_deadline=deadline.isoformat(),
            )
        # A newer memory in the trash still replaces it, as deleting the newer one left it
        # superseded: restoring it must not bring back what the newer one replaced.
        superseded = MemoryLink.objects.filter(
            target=current,
            kind=LinkKind.SUPERSEDES,
            source__status__in=[MemoryStatus.ACTIVE, MemoryStatus.DELETED],
        ).exists()
        # Back to where it stood when it was deleted (proposed, rejected…), as its history
        # says; superseded if a newer memory still replaces it.
        deleted = current.history.filter(to_status=MemoryStatus.DELETED).order_by("-at", "-id")
        was = deleted.values_list("from_status", flat=True).first()
        if was not in (MemoryStatus.PROPOSED, MemoryStatus.REJECTED, MemoryStatus.REVERTED):
            was = MemoryStatus.ACTIVE
        current.status = MemoryStatus.SUPERSEDED if superseded else was
        current.deleted_at = None
        current.deleted_by = None
        current.delete_reason = ""
        current.priority = priority_of(current)
        current.save()
        note(current, MemoryStatus.DELETED, current.status, by=by, reason="restored")
        due.mark_memories([current])
        note_memories_restored([current])
    logger.info("memory %s restored by %s", current.public_id, by or "an agent")
    return current


@dataclass(frozen=True)
class BulkPlan:
    """What a bulk delete would do: how many memories it marks, a few of them, and how
    many matching ones are already in the trash (left there)."""

    count: int
    sample: list[Memory]
    already: int


def plan_bulk_delete(selected: QuerySet) -> BulkPlan:
    """Count (and show a few of) the live memories of ``selected`` a bulk delete would mark;
    nothing changes."""
    alive = selected.exclude(status=MemoryStatus.DELETED)
    return BulkPlan(
        count=alive.count(),
        sample=list(alive.order_by("-occurred_at", "-id")[:SAMPLE_SIZE]),
        already=selected.filter(status=MemoryStatus.DELETED).count(),
    )


@dataclass(frozen=True)
class BulkDeleted:
    count: int
    records: list[DeletionRecord]


def delete_many(
    selected: QuerySet, *, by=None, reason: str, criteria: dict | None = None
) -> BulkDeleted:
    """Move the live memories of ``selected`` to the trash in one transaction, with one
    deletion record per project (keeping ``criteria``, the filters that selected them).
    ``TooManyToDelete`` (nothing changes) when more than ``MAX_BULK`` match."""
    reason = _reason(reason)
    with transaction.atomic():
        # of=self: a scoped selection joins the session (outer), which needs no lock.
        locked = list(
            selected.exclude(status=MemoryStatus.DELETED)
            .order_by("pk")
            .select_for_update(of=("self",))
            .only(*TRASH_COLUMNS)[: MAX_BULK + 1]
        )
        if len(locked) > MAX_BULK:
            raise TooManyToDelete(selected.exclude(status=MemoryStatus.DELETED).count())
        if not locked:
            return BulkDeleted(0, [])
        _mark_deleted([m.pk for m in locked], by=by, reason=reason)
        due.mark_memories(locked)
        records = record_memory_deletion(locked, by=by, reason=reason, criteria=criteria)
    logger.info("%d memorie(s) deleted in bulk by %s", len(locked), by or "an agent")
    return BulkDeleted(len(locked), records)


def purge_expired(now) -> int:
    """Delete for good the deleted memories past their project's recovery window (their
    evidence and links with them), in batches; their deletion records stay, marked purged.
    Returns how many."""
    purged, last = 0, 0
    expired = past_window(Memory.objects.all(), now).order_by("pk")
    while batch := list(expired.filter(pk__gt=last).only(*TRASH_COLUMNS)[:PURGE_BATCH]):
        last = batch[-1].pk
        with transaction.atomic():
            # Locked and checked again: one restored meanwhile stays, and its record too.
            gone = list(
                past_window(Memory.objects.filter(pk__in=[m.pk for m in batch]), now)
                .select_for_update(of=("self",))
                .only(*TRASH_COLUMNS)
            )
            due.mark_memories(gone)
            note_memories_purged(gone)
            deleted = Memory.objects.filter(pk__in=[m.pk for m in gone]).delete()[1]
            purged += deleted.get("memories.Memory", 0)
    if purged:
        logger.info("purged %d deleted memorie(s) past their recovery window", purged)
    return purged
