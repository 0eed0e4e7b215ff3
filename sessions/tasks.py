"""Celery tasks of the sessions app. JSON only, ids (or nothing) in; each is idempotent.

The enrichment tasks pull their work from the database (see ``sessions/enrich/pipeline.py``): a task
message only says "there is work". ``sessions/poke.py`` sends one after a capture commits,
at most once a second; the beat ``sweep`` sends one every minute whatever happened, so work
left behind by a lost message, a dead worker or a Redis outage is picked up again.

Each task's name is pinned: messages already queued in Redis, and the beat schedule, carry
these names, so moving the code must not change them (``tests/test_architecture.py``).
"""

from __future__ import annotations

import logging
import time

from celery import shared_task
from celery.exceptions import Ignore
from django.db import OperationalError
from django.utils import timezone

from sessions import decay, derived
from sessions.enrich import pipeline
from sessions.forget import anonymize, archive, read_counts, retention
from sessions.forget.lifecycle import purge_expired
from sessions.models import EnrichmentStatus, Session
from sessions.poke import more_work_arrived, poke_enrichment
from sessions.signals import decay_due
from teams.models import Project

logger = logging.getLogger(__name__)

# A task stops claiming new batches after this long and hands over to a fresh task, so one
# task never holds a worker for ever and beat/other tasks get a turn.
TASK_BUDGET_SECONDS = 60

RETRYING = {
    "autoretry_for": (OperationalError,),
    "retry_backoff": True,
    "retry_jitter": True,
    "max_retries": 5,
}


@shared_task(name="sessions.tasks.embed_pending", **RETRYING)
def embed_pending() -> int:
    """Embed pending messages batch after batch; hand over to a new task after the budget."""
    started, total = time.monotonic(), 0
    while time.monotonic() - started < TASK_BUDGET_SECONDS:
        claimed = pipeline.embed_pending_messages()
        total += claimed
        if not claimed:
            if more_work_arrived():  # a capture committed after that claim: look again
                continue
            enrich_sessions.delay()
            return total
    embed_pending.delay()  # more to do: continue in a fresh task
    return total


@shared_task(name="sessions.tasks.enrich_sessions", **RETRYING)
def enrich_sessions() -> int:
    """Summarise sessions one at a time, yielding to embedding: a message becomes searchable
    only once embedded, so new messages go first (at least one session per task, so
    enrichment still progresses under continuous capture)."""
    started, total = time.monotonic(), 0
    while time.monotonic() - started < TASK_BUDGET_SECONDS:
        done = pipeline.enrich_pending_sessions(limit=1)
        total += done
        if not done:
            return total
        if pipeline.has_pending_messages():
            embed_pending.delay()
            break
    enrich_sessions.delay()  # sessions may be left: continue after the embedding
    return total


@shared_task(name="sessions.tasks.sweep", ignore_result=True)
def sweep() -> dict:
    """Beat, every minute: failed work with attempts left back to pending, and a poke."""
    requeued = pipeline.requeue_failed()
    pending_messages = pipeline.has_pending_messages()
    pending_sessions = Session.objects.filter(enrichment_status=EnrichmentStatus.PENDING).exists()
    if pending_messages:
        embed_pending.delay()
    elif pending_sessions:
        enrich_sessions.delay()
    if requeued:
        logger.info("sweeper re-queued %d failed item(s)", requeued)
    return {"requeued": requeued, "messages": pending_messages, "sessions": pending_sessions}


@shared_task(name="sessions.tasks.purge_trash", ignore_result=True)
def purge_trash() -> int:
    """Beat, daily: purge for good the trashed sessions past their project's trash days."""
    purged = purge_expired()
    logger.info("purged %d session(s) past their trash window", purged)
    # Then what derives from sessions and has its own trash (deleted memories).
    derived.purge_expired(timezone.now())
    return purged


@shared_task(name="sessions.tasks.enforce_retention", ignore_result=True)
def enforce_retention() -> dict:
    """Beat, daily: sessions past their project's retention move to the trash."""
    summary = retention.enforce_retention()
    logger.info(
        "retention moved %d session(s) (%d messages, %d bytes) to the trash in %d project(s)",
        summary["sessions"],
        summary["messages"],
        summary["bytes"],
        summary["projects"],
    )
    return summary


@shared_task(name="sessions.tasks.flush_access", ignore_result=True)
def flush_access() -> int:
    """Beat, every minute: write the reads counted in Redis to their sessions."""
    from celery import current_app as app

    with app.connection_for_write() as conn:
        return read_counts.flush_access(conn.default_channel.client)


@shared_task(name="sessions.tasks.update_decay", ignore_result=True, **RETRYING)
def update_decay() -> int:
    """Beat, every 6 hours: recompute every live session's decay priority, then every
    other decaying row's (memories listen to ``decay_due``)."""
    now = timezone.now()
    changed = decay.update_priorities(now)
    decay_due.send(sender=Session, now=now)
    return changed


@shared_task(name="sessions.tasks.archive_check", ignore_result=True, **RETRYING)
def archive_check() -> dict:
    """Beat, daily: idle, decaying and archived by each project's thresholds."""
    return archive.archive_check()


# A project of many thousands of sessions takes long: one task goes through all of them (its
# names are read once, before the first session changes), well past the default time limit.
ANONYMIZE_TIME_LIMIT = 6 * 3600
PROGRESS_EVERY = 10  # sessions between two progress reports


@shared_task(
    name="sessions.tasks.anonymize_project",
    bind=True,
    ignore_result=False,
    time_limit=ANONYMIZE_TIME_LIMIT,
    soft_time_limit=ANONYMIZE_TIME_LIMIT - 60,
)
def anonymize_project(self, project_id: int, config: dict, user_id: int | None = None) -> dict:
    """Anonymise a project's sessions one by one, reporting ``done`` of ``total`` as it goes
    (``GET /api/v1/anonymize/{job}``). Running it again changes nothing more."""
    from django.contrib.auth import get_user_model

    project = Project.objects.select_related("team").filter(pk=project_id).first()
    if project is None:
        return {"project": project_id, "done": 0, "total": 0, "result": None}
    by = get_user_model().objects.filter(pk=user_id).first() if user_id else None
    meta = {"team": project.team_id, "project": project_id, "done": 0, "total": 0}

    def progress(done: int, total: int) -> None:
        meta.update(done=done, total=total)
        if done % PROGRESS_EVERY == 0 or done == total:
            self.update_state(state="PROGRESS", meta=meta)

    try:
        outcome = anonymize.anonymize_project(
            project, anonymize.config_from(config), dry_run=False, by=by, progress=progress
        )
    except Exception as exc:
        # Kept with the job's team, so its admins can read why (a plain failure keeps only
        # the exception). Sessions done so far stay done; running it again goes on.
        logger.exception("anonymising project %s failed", project)
        self.update_state(
            state="FAILED", meta={**meta, "error": f"{exc.__class__.__name__}: {exc}"}
        )
        raise Ignore() from exc
    if outcome.left_to_embed:
        poke_enrichment()
    # The mapping and excerpts hold the names themselves: they stay out of the result store.
    result = {k: v for k, v in outcome.as_dict().items() if k not in ("mapping", "excerpts")}
    meta.update(done=outcome.sessions, total=outcome.sessions_in_scope)
    return {**meta, "result": result}
