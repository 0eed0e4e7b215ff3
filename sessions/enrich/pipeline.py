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
import secrets
import time
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from sessions.embedding.backend import embed
from sessions.embedding.model_files import model_name
from sessions.enrich.chunking import (
    MAX_CHUNK_CHARS,
    chunk_message,
    context_for,
    header_for,
    takes_context,
)
from sessions.enrich.session import enrich_session
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

    Three steps, so no row lock is held while the model runs (a capture appending to the
    same session, or a purge, never waits seconds for a batch):

    1. claim: one short statement marks the batch's rows with its key, while this
       connection holds the key's advisory lock (the claim is live as long as the lock);
    2. chunk and embed, outside any transaction;
    3. write: lock the batch's sessions (``FOR KEY SHARE``), then its messages still pending
       under our claim, in id order; replace their chunks and mark them done. A message
       purged meanwhile is simply gone.
    """
    limit = limit or settings.EMBED_BATCH_MESSAGES
    key = secrets.randbits(31)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s, %s)", [CLAIM_LOCK_SPACE, key])
    try:
        claimed = _claim(key, limit, only_ids)
        if not claimed:
            return 0
        started = time.perf_counter()
        contexts = _previous_turns(claimed)
        plans = {
            m.id: chunk_message(
                m.content,
                header=header_for(m.role, m.author, m.tool_name),
                context=contexts.get(m.id, ""),
            )
            for m in claimed
        }
        chunked = time.perf_counter()
        failures = _embed_plans(claimed, plans)
        embedded = time.perf_counter()
        written, chunks = _write_batch(key, claimed, plans, failures)
        wrote = time.perf_counter()
        failed = sum(1 for m in written if m.id in failures)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [CLAIM_LOCK_SPACE, key])
    elapsed = time.perf_counter() - started
    logger.info(
        # Where a batch's time goes: the model's share against the pipeline's own.
        "embedded %d message(s) as %d chunk(s) in %.2f s (chunking %.3f, model %.2f, "
        "writing %.3f)%s%s",
        len(written) - failed,
        chunks,
        elapsed,
        chunked - started,
        embedded - chunked,
        wrote - embedded,
        f"; {failed} failed" if failed else "",
        f"; {len(claimed) - len(written)} purged meanwhile" if len(written) < len(claimed) else "",
    )
    return len(claimed)


# Advisory locks of a batch's claim: (CLAIM_LOCK_SPACE, key). A dead worker's connection
# closes and its locks go with it, so its rows are claimable again at once. (Session-level
# advisory locks need a real session per worker: not a transaction-pooling proxy.)
CLAIM_LOCK_SPACE = 0x6D656D  # "mem"
# The batch is a materialised CTE: as a plain ``IN (subquery)`` the planner may run the
# LIMIT … SKIP LOCKED subquery more than once and claim far more rows than asked. The rows
# are then updated by id (``= ANY``), not joined to it: a join's plan rests on estimates, and
# on a table analysed while empty it may scan every message once per claimed row
# (sessions/capture/keyword_context.py tells the same story).
CLAIM_SQL = """
WITH batch AS MATERIALIZED (
    SELECT p.id FROM agent_sessions_message p
    WHERE p.enrichment_status = 'pending' {only}
      AND (p.claimed_by IS NULL OR NOT EXISTS (
          SELECT 1 FROM pg_locks l
          WHERE l.locktype = 'advisory' AND l.classid = %(space)s
            AND l.objid = p.claimed_by AND l.objsubid = 2))
    ORDER BY p.created_at
    LIMIT %(limit)s
    FOR NO KEY UPDATE SKIP LOCKED
)
UPDATE agent_sessions_message m SET claimed_by = %(key)s
WHERE m.id = ANY(ARRAY(SELECT id FROM batch))
RETURNING m.id, m.team_id, m.session_id, m.role, m.author, m.tool_name, m.content,
          m.enrichment_attempts
"""


def _claim(key: int, limit: int, only_ids: list[int] | None) -> list[Message]:
    params = {"key": key, "space": CLAIM_LOCK_SPACE, "limit": limit, "ids": only_ids}
    sql = CLAIM_SQL.format(only="AND p.id = ANY(%(ids)s)" if only_ids is not None else "")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    fields = ("id", "team_id", "session_id", "role", "author", "tool_name", "content")
    return [
        Message(**dict(zip(fields, row[:7], strict=True)), enrichment_attempts=row[7])
        for row in rows
    ]


# The message before each given one in its session, when it is user or assistant prose (not a
# tombstone, not a tool call or output: see chunking.takes_context); only its end
# is read (a context is its last word pieces), and only for messages short enough to get one.
PREVIOUS_SQL = f"""
SELECT m.id, p.role, p.author, p.tool_name, right(p.content, {MAX_CHUNK_CHARS})
FROM agent_sessions_message m
CROSS JOIN LATERAL (
    SELECT p.role, p.author, p.tool_name, p.content, p.removed_at
    FROM agent_sessions_message p
    WHERE p.session_id = m.session_id AND p.seq < m.seq
    ORDER BY p.seq DESC LIMIT 1
) p
WHERE m.id = ANY(%s) AND p.removed_at IS NULL
  AND p.role IN ('user', 'assistant') AND p.tool_name = ''
"""


def _previous_turns(claimed: list[Message]) -> dict[int, str]:
    """Each short message's context (``chunking.context_for`` the message before it).

    Read when the message is embedded: appends only add after the last message, so the one
    before already exists. A writer that changes or removes a message has the one after it
    embedded again (``embed_followers_again``)."""
    short = [
        m.id
        for m in claimed
        if len(m.content) <= MAX_CHUNK_CHARS and takes_context(m.role, m.tool_name)
    ]
    if not short:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(PREVIOUS_SQL, [short])
        rows = cursor.fetchall()
    return {
        message_id: context_for(_whole_words(content), header=header_for(role, author, tool_name))
        for message_id, role, author, tool_name, content in rows
    }


def _whole_words(end: str) -> str:
    """The end of a message as read (its last MAX_CHUNK_CHARS), from its first whole word."""
    if len(end) < MAX_CHUNK_CHARS:
        return end
    _, _, rest = end.partition(" ")
    return rest or end


# The followers are matched by id (``= ANY``), not joined: see CLAIM_SQL.
FOLLOWERS_SQL = f"""
WITH followers AS (
    SELECT n.id FROM unnest(%(seqs)s::integer[]) AS changed(seq)
    CROSS JOIN LATERAL (
        SELECT n.id, n.role, n.tool_name, n.content, n.removed_at FROM agent_sessions_message n
        WHERE n.session_id = %(session)s AND n.seq > changed.seq
        ORDER BY n.seq LIMIT 1
    ) n
    WHERE n.removed_at IS NULL AND char_length(n.content) <= {MAX_CHUNK_CHARS}
      AND n.role IN ('user', 'assistant') AND n.tool_name = ''
), gone AS (
    DELETE FROM agent_sessions_messagechunk c
    WHERE c.message_id = ANY(ARRAY(SELECT id FROM followers))
)
UPDATE agent_sessions_message m
SET enrichment_status = 'pending', enrichment_attempts = 0, enrichment_error = '',
    claimed_by = NULL
WHERE m.id = ANY(ARRAY(SELECT id FROM followers))
"""


def embed_followers_again(session_id: int, seqs) -> None:
    """The message right after each of ``seqs`` in the session back to pending, its chunks
    gone: it may have been embedded with the old text at that seq as its context (a removed
    message's words must not stay in it). The caller pokes the workers after its commit. A
    batch embedding it meanwhile finds its claim gone and drops its work."""
    with connection.cursor() as cursor:
        cursor.execute(FOLLOWERS_SQL, {"session": session_id, "seqs": sorted(set(seqs))})


def _write_batch(key, claimed, plans, failures) -> tuple[list[Message], int]:
    """Store the batch's chunks and statuses; returns the messages written and how many
    chunks.

    Locks in the order every writer uses (session, then its messages), so a concurrent
    capture (which holds its session ``FOR NO KEY UPDATE``, compatible with our ``KEY
    SHARE``) or purge (``FOR UPDATE``, which we wait for) cannot form a cycle with us.
    """
    now = timezone.now()
    with transaction.atomic():
        with connection.cursor() as cursor:  # Django has no select_for_update(key_share=)
            cursor.execute(
                "SELECT id FROM agent_sessions_session WHERE id = ANY(%s) "
                "ORDER BY id FOR KEY SHARE",
                [sorted({m.session_id for m in claimed})],
            )
            sessions = [row[0] for row in cursor.fetchall()]
        mine = set(
            Message.objects.filter(
                id__in=[m.id for m in claimed],
                session_id__in=sessions,
                enrichment_status=PENDING,
                claimed_by=key,
            )
            .order_by("id")
            .select_for_update(no_key=True)
            .values_list("id", flat=True)
        )
        batch = [m for m in claimed if m.id in mine]
        MessageChunk.objects.filter(message_id__in=mine).delete()
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
            for m in batch
            if m.id not in failures
            for chunk, vector in plans[m.id]
        ]
        MessageChunk.objects.bulk_create(rows, batch_size=1000)
        Message.objects.filter(id__in=[m.id for m in batch if m.id not in failures]).update(
            enrichment_status=DONE, enrichment_error="", enriched_at=now, claimed_by=None
        )
        for message in batch:
            if message.id in failures:
                Message.objects.filter(id=message.id).update(
                    enrichment_status=FAILED,
                    enrichment_error=failures[message.id],
                    enrichment_attempts=message.enrichment_attempts + 1,
                    enriched_at=now,
                    claimed_by=None,
                )
    return batch, len(rows)


def _embed_plans(claimed, plans) -> dict[int, str]:
    """Fill each plan with vectors in one batched call; on error, find the culprit(s)
    message by message so one bad message cannot hold the others back."""
    chunks = [chunk for m in claimed for chunk in plans[m.id]]
    try:
        vectors = iter(embed([c.text for c in chunks], token_ids=[c.token_ids for c in chunks]))
        for m in claimed:
            plans[m.id] = [(chunk, next(vectors)) for chunk in plans[m.id]]
        return {}
    except Exception as exc:  # the model raised on some input; isolate it
        logger.warning("batch embedding failed (%s); retrying message by message", exc)
    failures: dict[int, str] = {}
    for m in claimed:
        try:
            vectors = embed(
                [c.text for c in plans[m.id]], token_ids=[c.token_ids for c in plans[m.id]]
            )
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


# Session enrichment is claimed by a transaction-level advisory lock on (space, session id),
# not a row lock: the summary takes seconds, and appends to the session must not wait for it.
ENRICH_LOCK_SPACE = 0x656E72  # "enr"
CANDIDATES = 20


def enrich_pending_sessions(limit: int = 10) -> int:
    """Claim sessions whose new messages are not yet summarised; returns how many."""
    processed = 0
    while processed < limit:
        quiet_since = timezone.now() - timedelta(seconds=settings.SESSION_ENRICH_DELAY_SECONDS)
        candidates = list(
            Session.objects.filter(enrichment_status=PENDING, updated_at__lte=quiet_since)
            .order_by("updated_at")
            .values_list("pk", flat=True)[:CANDIDATES]
        )
        with transaction.atomic():
            session = _claim_session(candidates)
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


def _claim_session(candidates: list[int]) -> Session | None:
    """The first candidate no other worker is enriching and still pending (read after the
    lock, so a worker that just finished it is seen)."""
    with connection.cursor() as cursor:
        for pk in candidates:
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [ENRICH_LOCK_SPACE, pk])
            if cursor.fetchone()[0]:
                session = Session.objects.filter(pk=pk, enrichment_status=PENDING).first()
                if session is not None:
                    return session
    return None


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


def pipeline_state(access=None) -> dict:
    """Pending, failed and recent throughput, for the API and the dashboard: of what
    ``access`` (a ``teams.access.Access``) sees, or of everything."""
    messages = Message.objects.all()
    sessions = Session.objects.all()
    if access is not None:
        messages = access.scope(messages, "session__project_id")
        sessions = access.scope(sessions)
    since = timezone.now() - timedelta(minutes=5)
    return {
        "messages": _work_counts(messages, since, done_key="embedded_last_5_min"),
        "sessions": _work_counts(sessions, since, done_key="enriched_last_5_min"),
    }


def _work_counts(rows, since, *, done_key: str) -> dict:
    # "Not done" first, so the counts use the partial indexes of the rows still to do.
    todo = ~Q(enrichment_status=DONE)
    return {
        "pending": rows.filter(todo, enrichment_status=PENDING).count(),
        "failed": rows.filter(todo, enrichment_status=FAILED).count(),
        done_key: rows.filter(enrichment_status=DONE, enriched_at__gte=since).count(),
    }


def broker_queue_depth() -> int | None:
    """Task messages waiting in the default Celery queue; None when the broker is down."""
    from celery import current_app as app

    try:
        with app.connection_for_read() as conn:
            return conn.default_channel.client.llen(app.conf.task_default_queue)
    except Exception:
        return None
