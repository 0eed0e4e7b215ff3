"""The enrichment pipeline: embed messages, then enrich sessions (entities, summary, topics,
session vector). Plain functions; ``sessions/tasks.py`` runs them on Celery workers.

Work is *pulled* from the database, not pushed through the broker: each message and session
has a status column, and a worker claims a batch of pending rows with
``SELECT … FOR UPDATE SKIP LOCKED``, does the work and marks them done in the same
transaction. So:

- batches span messages of many sessions (the model is far faster on batches);
- several workers share the work without coordination;
- a worker that dies mid-batch rolls its transaction back, and the rows are pending again;
- running the same step twice changes nothing (chunks are replaced, not added);
- the broker only carries "there is work" pokes, so losing Redis loses no work: the beat
  sweeper (or the next capture) pokes again.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from sessions.chunking import chunk_message, header_for
from sessions.embedding import embed, model_name
from sessions.enrichment import enrich_session
from sessions.models import EnrichmentStatus, Message, MessageChunk, Session

logger = logging.getLogger(__name__)

PENDING, DONE, FAILED = EnrichmentStatus.PENDING, EnrichmentStatus.DONE, EnrichmentStatus.FAILED
ERROR_CHARS = 1000


def _error_text(exc: BaseException) -> str:
    return f"{exc.__class__.__name__}: {exc}"[:ERROR_CHARS]


# ---------------------------------------------------------------------------------------
# Messages → chunks with vectors
# ---------------------------------------------------------------------------------------


def embed_pending_messages(limit: int | None = None, only_ids: list[int] | None = None) -> int:
    """Claim up to ``limit`` pending messages (of ``only_ids``, if given), embed them and
    store their chunks. Returns how many messages were claimed (0: nothing left to do).
    """
    limit = limit or settings.EMBED_BATCH_MESSAGES
    pending = Message.objects.filter(enrichment_status=PENDING)
    if only_ids is not None:
        pending = pending.filter(id__in=only_ids)
    with transaction.atomic():
        claimed = list(
            pending.order_by("created_at")
            .select_for_update(skip_locked=True)
            .only(
                "id",
                "team_id",
                "session_id",
                "role",
                "author",
                "tool_name",
                "content",
                "enrichment_attempts",
            )[:limit]
        )
        if not claimed:
            return 0
        started = time.perf_counter()
        plans = {
            m.id: chunk_message(m.content, header=header_for(m.role, m.author, m.tool_name))
            for m in claimed
        }
        failures = _embed_plans(claimed, plans)
        now = timezone.now()
        MessageChunk.objects.filter(message_id__in=[m.id for m in claimed]).delete()
        rows = [
            MessageChunk(
                team_id=m.team_id,
                session_id=m.session_id,
                message_id=m.id,
                index=chunk.index,
                char_start=chunk.char_start,
                char_end=chunk.char_end,
                text=chunk.text,
                embedding=vector,
                model=model_name(),
            )
            for m in claimed
            if m.id not in failures
            for chunk, vector in plans[m.id]
        ]
        MessageChunk.objects.bulk_create(rows, batch_size=1000)
        done_ids = [m.id for m in claimed if m.id not in failures]
        Message.objects.filter(id__in=done_ids).update(
            enrichment_status=DONE, enrichment_error="", enriched_at=now
        )
        for message in claimed:
            if message.id in failures:
                Message.objects.filter(id=message.id).update(
                    enrichment_status=FAILED,
                    enrichment_error=failures[message.id],
                    enrichment_attempts=message.enrichment_attempts + 1,
                    enriched_at=now,
                )
    elapsed = time.perf_counter() - started
    logger.info(
        "embedded %d message(s) as %d chunk(s) in %.2f s%s",
        len(done_ids),
        len(rows),
        elapsed,
        f"; {len(failures)} failed" if failures else "",
    )
    return len(claimed)


def _embed_plans(claimed, plans) -> dict[int, str]:
    """Fill each plan with vectors in one batched call; on error, find the culprit(s)
    message by message so one bad message cannot hold the others back."""
    texts = [chunk.text for m in claimed for chunk in plans[m.id]]
    try:
        vectors = iter(embed(texts))
        for m in claimed:
            plans[m.id] = [(chunk, next(vectors)) for chunk in plans[m.id]]
        return {}
    except Exception as exc:  # the model raised on some input; isolate it
        logger.warning("batch embedding failed (%s); retrying message by message", exc)
    failures: dict[int, str] = {}
    for m in claimed:
        try:
            vectors = embed([chunk.text for chunk in plans[m.id]])
            plans[m.id] = list(zip(plans[m.id], vectors, strict=True))
        except Exception as exc:
            failures[m.id] = _error_text(exc)
            plans[m.id] = []
    return failures


# ---------------------------------------------------------------------------------------
# Sessions → entities, summary, topics, session vector
# ---------------------------------------------------------------------------------------


def has_pending_messages() -> bool:
    return Message.objects.filter(enrichment_status=PENDING).exists()


def enrich_pending_sessions(limit: int = 10) -> int:
    """Claim sessions whose new messages are not yet summarised; returns how many."""
    quiet_since = timezone.now() - timedelta(seconds=settings.SESSION_ENRICH_DELAY_SECONDS)
    processed = 0
    while processed < limit:
        with transaction.atomic():
            session = (
                Session.objects.filter(enrichment_status=PENDING, updated_at__lte=quiet_since)
                .order_by("updated_at")
                .select_for_update(skip_locked=True)
                .first()
            )
            if session is None:
                return processed
            try:
                with transaction.atomic():
                    enrich_session(session)
            except Exception as exc:
                logger.exception("enriching session %s failed", session.public_id)
                Session.objects.filter(pk=session.pk).update(
                    enrichment_status=FAILED,
                    enrichment_error=_error_text(exc),
                    enrichment_attempts=session.enrichment_attempts + 1,
                    enriched_at=timezone.now(),
                )
        processed += 1
    return processed


# ---------------------------------------------------------------------------------------
# Recovery and visibility
# ---------------------------------------------------------------------------------------


def requeue_failed(now=None) -> int:
    """Failed items with attempts left go back to pending after a backoff of 2^attempts
    minutes; returns how many."""
    now = now or timezone.now()
    requeued = 0
    for model in (Message, Session):
        for attempts in range(1, settings.ENRICHMENT_MAX_ATTEMPTS):
            requeued += model.objects.filter(
                enrichment_status=FAILED,
                enrichment_attempts=attempts,
                enriched_at__lte=now - timedelta(minutes=2**attempts),
            ).update(enrichment_status=PENDING)
    return requeued


def retry_failed(queryset) -> int:
    """Admin action: failed rows back to pending now, with a fresh attempt count."""
    return queryset.filter(enrichment_status=FAILED).update(
        enrichment_status=PENDING, enrichment_attempts=0, enrichment_error=""
    )


def pipeline_state(team_ids=None) -> dict:
    """Pending, failed and recent throughput, for the API and the dashboard."""
    messages = Message.objects.all()
    sessions = Session.objects.all()
    if team_ids is not None:
        messages = messages.filter(team_id__in=team_ids)
        sessions = sessions.filter(team_id__in=team_ids)
    since = timezone.now() - timedelta(minutes=5)
    todo = ~Q(enrichment_status=DONE)
    return {
        "messages": {
            "pending": messages.filter(todo, enrichment_status=PENDING).count(),
            "failed": messages.filter(todo, enrichment_status=FAILED).count(),
            "embedded_last_5_min": messages.filter(
                enrichment_status=DONE, enriched_at__gte=since
            ).count(),
        },
        "sessions": {
            "pending": sessions.filter(todo, enrichment_status=PENDING).count(),
            "failed": sessions.filter(todo, enrichment_status=FAILED).count(),
            "enriched_last_5_min": sessions.filter(
                enrichment_status=DONE, enriched_at__gte=since
            ).count(),
        },
    }


def broker_queue_depth() -> int | None:
    """Task messages waiting in the default Celery queue; None when the broker is down."""
    from memoryapp.celery import app

    try:
        with app.connection_for_read() as conn:
            return conn.default_channel.client.llen(app.conf.task_default_queue)
    except Exception:
        return None
