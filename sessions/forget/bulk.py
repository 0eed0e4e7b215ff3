"""Many sessions into the trash, or back, at once: the rules of bulk deletion.

A caller selects sessions (the ones a person ticked, or everything matching a filter) as a
queryset of sessions it may see, and checks roles itself. Then:

- only live sessions move; selected ones already in the trash are counted and reported,
  never an error;
- at most ``MAX_BULK`` sessions move at a time: a larger selection is refused, to be
  narrowed (by a date range, say) and deleted in steps;
- everything moves in one transaction, through ``sessions.forget.lifecycle``, so a failure
  leaves nothing half-done; a session someone else moved meanwhile is counted as skipped;
- a delete leaves one deletion record per project, in that transaction: scope "selection"
  for ticked sessions, "filter" (with the filter's criteria) for a filter.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Max, Min, QuerySet, Sum

from sessions.forget.lifecycle import LifecycleConflict, restore, soft_delete
from sessions.forget.records import record_deletion
from sessions.models import DeletionRecord, DeletionScope, Session

logger = logging.getLogger(__name__)

# One bulk delete moves at most this many sessions: they are locked and moved in one
# transaction, which must stay short.
MAX_BULK = 5000


class NothingToDelete(Exception):
    """No live session is selected; ``already`` selected ones are in the trash."""

    def __init__(self, already: int):
        super().__init__(f"no live session selected ({already} already in the trash)")
        self.already = already


class TooManyToDelete(Exception):
    """More than ``MAX_BULK`` live sessions are selected."""

    def __init__(self, count: int):
        super().__init__(f"{count} sessions selected; at most {MAX_BULK} move at a time")
        self.count = count
        self.limit = MAX_BULK


@dataclass(frozen=True)
class BulkDelete:
    """A bulk delete the rules allow, before it runs: what will move, and what stays."""

    alive: QuerySet  # the sessions that move
    sessions: int
    messages: int
    size: int  # bytes of their messages
    min_days: int  # how long they can be restored: the shortest trash period of their projects
    max_days: int  # … and the longest
    already: int  # selected sessions already in the trash


@dataclass(frozen=True)
class BulkResult:
    done: int  # sessions moved (to the trash, or out of it)
    messages: int  # their messages
    skipped: int  # selected, but not in the state the move needs (someone else moved them)
    size: int = 0  # bytes of their messages
    records: tuple[DeletionRecord, ...] = ()  # the deletion records a delete left


def plan_bulk_delete(selected: QuerySet, *, check: bool = True) -> BulkDelete:
    """What deleting ``selected`` would move; NothingToDelete or TooManyToDelete when the
    rules refuse it (unless ``check`` is false: a dry run counts whatever matches)."""
    alive = selected.alive()
    totals = alive.aggregate(
        sessions=Count("id"),
        messages=Sum("message_count"),
        size=Sum("size_bytes"),
        min_days=Min("project__trash_days"),
        max_days=Max("project__trash_days"),
    )
    already = selected.in_trash().count()
    if check and totals["sessions"] == 0:
        raise NothingToDelete(already)
    if check and totals["sessions"] > MAX_BULK:
        raise TooManyToDelete(totals["sessions"])
    return BulkDelete(
        alive=alive,
        sessions=totals["sessions"],
        messages=totals["messages"] or 0,
        size=totals["size"] or 0,
        min_days=totals["min_days"],
        max_days=totals["max_days"],
        already=already,
    )


def soft_delete_many(
    plan: BulkDelete, *, by, reason: str = "", criteria: dict | None = None
) -> BulkResult:
    """Move the planned sessions to the trash, as ``by`` (a user, a token principal, or
    None for a policy). ``criteria`` (``records.criteria_of`` a filter) when they were
    selected by a filter: the records keep it; else they are a selection."""
    scope = DeletionScope.SELECTION if criteria is None else DeletionScope.FILTER

    def move(session):
        soft_delete(session, by=by, reason=reason, record=False)

    def record(moved):
        return record_deletion(moved, scope, by=by, reason=reason, criteria=criteria)

    result = _each_locked(plan.alive, move, record)
    logger.info("%s moved %d session(s) to the trash in bulk", by or "an agent", result.done)
    return result


def restore_many(selected: QuerySet) -> BulkResult:
    """Restore the selected sessions from the trash; those not in it are skipped."""
    return _each_locked(selected, restore)


def _each_locked(
    sessions: QuerySet,
    move: Callable[[Session], object],
    record: Callable[[list[Session]], list[DeletionRecord]] | None = None,
) -> BulkResult:
    skipped = 0
    moved: list[Session] = []
    records: list[DeletionRecord] = []
    with transaction.atomic():
        # of=self: a filtered selection may join other tables, which need no lock.
        locked = sessions.select_for_update(of=("self",))
        columns = ("id", "public_id", "message_count", "size_bytes", "project_id")
        for session in locked.only(*columns):
            try:
                move(session)
            except LifecycleConflict:
                skipped += 1
                continue
            moved.append(session)
        if record is not None and moved:
            records = record(moved)
    return BulkResult(
        done=len(moved),
        messages=sum(s.message_count for s in moved),
        skipped=skipped,
        size=sum(s.size_bytes for s in moved),
        records=tuple(records),
    )
