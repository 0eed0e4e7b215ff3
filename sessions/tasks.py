"""Celery tasks of the sessions app. Ids in, JSON out; each re-reads its rows and is idempotent."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import OperationalError
from django.db.models import Count, F, Func, Sum

from sessions.models import Message, Session

logger = logging.getLogger(__name__)


@shared_task(
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
    acks_late=True,  # idempotent: running it twice gives the same numbers
)
def refresh_session_stats(session_id: int) -> dict | None:
    """Recount a session's messages and bytes from its rows (after appends or deletions)."""
    stats = Message.objects.filter(session_id=session_id).aggregate(
        count=Count("id"),
        size=Sum(Func(F("content"), function="octet_length")),
    )
    updated = Session.objects.filter(pk=session_id).update(
        message_count=stats["count"], size_bytes=stats["size"] or 0
    )
    if not updated:
        logger.info("session %s is gone; nothing to refresh", session_id)
        return None
    size = stats["size"] or 0
    return {"session_id": session_id, "message_count": stats["count"], "size_bytes": size}
