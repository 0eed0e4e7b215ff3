"""Celery tasks of the memories app; names pinned (tests/test_architecture.py)."""

from __future__ import annotations

import logging
import time
from datetime import date, timedelta

from celery import shared_task
from django.utils import timezone

from memories.diary import distill, due
from memories.enrich import run
from memories.poke import EXTRACTION
from sessions.enrich import pipeline
from sessions.tasks import RETRYING, TASK_BUDGET_SECONDS, embed_pending  # the same as theirs
from teams.models import Team

logger = logging.getLogger(__name__)


@shared_task(name="memories.tasks.extract_pending", **RETRYING)
def extract_pending() -> int:
    """Extract memories from sessions whose new messages are enriched, one session at a
    time, yielding to embedding like the sessions' enrichment does: new messages become
    searchable first (at least one session per task, so extraction still progresses under
    continuous capture); hand over to a fresh task after the budget."""
    started, total = time.monotonic(), 0
    while time.monotonic() - started < TASK_BUDGET_SECONDS:
        done = run.extract_pending_sessions(limit=1)
        total += done
        if not done:
            if EXTRACTION.more_work_arrived():  # a session became due after that claim
                continue
            return total
        if pipeline.has_pending_messages():
            embed_pending.delay()
            break
    extract_pending.delay()  # sessions may be left: continue after the embedding
    return total


@shared_task(name="memories.tasks.sweep", ignore_result=True)
def sweep() -> dict:
    """Beat, every minute: failed extractions with attempts left back to pending (after
    their backoff), and a poke when any is pending."""
    requeued = run.requeue_failed()
    pending = run.has_pending()
    if pending:
        extract_pending.delay()
    return {"requeued": requeued, "pending": pending}


@shared_task(name="memories.tasks.distill_diaries", ignore_result=True, **RETRYING)
def distill_diaries(day: str = "") -> dict:
    """Beat, daily: the diary entries of yesterday (now complete) and of today so far; with
    ``day`` (YYYY-MM-DD), that day's. Re-running a day updates its entries. Then every day
    marked due (``memories/diary/due.py``)."""
    days = [date.fromisoformat(day)] if day else [timezone.now().date() - timedelta(days=1)]
    if not day:
        days.append(timezone.now().date())
    # One team at a time: each team's day is written in its own transaction.
    team_ids = list(Team.objects.order_by("pk").values_list("pk", flat=True))
    written = {
        d.isoformat(): sum(distill.distill_day(d, team_id=t) for t in team_ids) for d in days
    }
    for marked, count in due.distill_due().items():
        written[marked] = written.get(marked, 0) + count
    return written


@shared_task(name="memories.tasks.distill_due_diaries", ignore_result=True, **RETRYING)
def distill_due_diaries() -> dict:
    """Beat, every few minutes: the days whose material changed (a late or imported
    session, an erasure, an anonymisation, a restore) are distilled again."""
    return due.distill_due()
