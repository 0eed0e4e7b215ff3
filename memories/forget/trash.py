"""Deleted memories: a trash with the project's recovery window, then the daily purge
(seed 001 §8.2–8.3)."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import DateTimeField, DurationField, ExpressionWrapper, F, Value

from memories.diary import due
from memories.models import Memory, MemoryStatus

logger = logging.getLogger(__name__)

PURGE_BATCH = 1000


def past_window(memories, now):
    """The deleted ones of ``memories`` whose project's recovery window has passed."""
    window = ExpressionWrapper(
        F("project__trash_days") * Value(timedelta(days=1)), output_field=DurationField()
    )
    cutoff = ExpressionWrapper(Value(now) - window, output_field=DateTimeField())
    return memories.filter(status=MemoryStatus.DELETED, deleted_at__lte=cutoff)


def purge_expired(now) -> int:
    """Delete for good the deleted memories past their project's recovery window (their
    evidence and links with them), in batches; returns how many."""
    purged, last = 0, 0
    expired = past_window(Memory.objects.all(), now).order_by("pk")
    while batch := list(
        expired.filter(pk__gt=last).only("pk", "team_id", "occurred_at", "session_id")[:PURGE_BATCH]
    ):
        last = batch[-1].pk
        with transaction.atomic():
            due.mark_memories(batch)
            gone = past_window(Memory.objects.filter(pk__in=[m.pk for m in batch]), now)
            purged += gone.delete()[1].get("memories.Memory", 0)
    if purged:
        logger.info("purged %d deleted memorie(s) past their recovery window", purged)
    return purged
