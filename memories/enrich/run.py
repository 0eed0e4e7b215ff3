"""Running the extractor over sessions as they grow: incremental, idempotent, retried.

A ``MemoryExtraction`` row per session says how far the extractor has read
(``through_seq``). When the session's enrichment moves past it (``receivers.py``), the row
is pending; a worker claims it (a transaction-level advisory lock, so a capture appending
to the session never waits), reads the messages after ``through_seq`` up to what the
enrichment has read, extracts drafts (``extract.py``: offline rules, or an LLM endpoint when
configured, falling back to the rules and saying why in ``error``), embeds them with the
query encoder, and records them (``capture/record.py``: numbered, merged or superseding) together
with the new ``through_seq``, in one transaction. A failure rolls all of it back and marks
the row failed with the reason; the sweep retries it after 2^attempts minutes.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memories.capture.record import fingerprint, record
from memories.enrich.extract import extract_drafts
from memories.enrich.fixes import resolve_fixed
from memories.enrich.staleness import flag_stale
from memories.enrich.stated import stated_drafts
from memories.models import MemoryEvidence, MemoryExtraction
from sessions.embedding.query import embed_query
from sessions.models import KEYWORD_VECTORS, EnrichmentStatus, Message, Session

logger = logging.getLogger(__name__)

PENDING, DONE, FAILED = EnrichmentStatus.PENDING, EnrichmentStatus.DONE, EnrichmentStatus.FAILED
EXTRACT_LOCK_SPACE = 0x6D6578  # "mex"
CANDIDATES = 20
MAX_MESSAGES_PER_STEP = 2000
ERROR_CHARS = 1000


def has_pending() -> bool:
    return MemoryExtraction.objects.filter(status=PENDING).exists()


def extract_pending_sessions(limit: int = 10) -> int:
    """Claim and run up to ``limit`` pending extractions; returns how many ran."""
    processed = 0
    while processed < limit:
        candidates = list(
            MemoryExtraction.objects.filter(status=PENDING)
            .order_by("updated_at")
            .values_list("pk", flat=True)[:CANDIDATES]
        )
        with transaction.atomic():
            extraction = _claim(candidates)
            if extraction is None:
                return processed
            try:
                with transaction.atomic():
                    extract_session(extraction)
            except Exception as exc:
                logger.exception("extracting memories of session %s failed", extraction.session_id)
                MemoryExtraction.objects.filter(pk=extraction.pk).update(
                    status=FAILED,
                    error=f"{exc.__class__.__name__}: {exc}"[:ERROR_CHARS],
                    attempts=extraction.attempts + 1,
                    extracted_at=timezone.now(),
                )
        processed += 1
    return processed


def _claim(candidates: list[int]) -> MemoryExtraction | None:
    with connection.cursor() as cursor:
        for pk in candidates:
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [EXTRACT_LOCK_SPACE, pk])
            if cursor.fetchone()[0]:
                extraction = MemoryExtraction.objects.filter(pk=pk, status=PENDING).first()
                if extraction is not None:
                    return extraction
    return None


def extract_session(extraction: MemoryExtraction) -> int:
    """Extract and record the memories of the session's messages not yet read; returns how
    many drafts were recorded."""
    session = Session.objects.select_related("project").filter(pk=extraction.session_id).first()
    if session is None or session.deleted_at is not None:
        MemoryExtraction.objects.filter(pk=extraction.pk).update(status=DONE, error="")
        return 0
    messages = list(
        Message.objects.of_session(session)
        .filter(
            seq__gt=extraction.through_seq,
            seq__lte=session.enriched_through_seq,
            removed_at__isnull=True,
        )
        .order_by("seq")
        .defer(*KEYWORD_VECTORS)[:MAX_MESSAGES_PER_STEP]
    )
    # What the transcript itself states (Memory Stored: blocks, memory files) comes first;
    # the rules do not read those messages again: their author already said what to keep.
    # Before this session's own memories are recorded: its edits concern what was said before.
    flag_stale(session, messages)
    resolve_fixed(session, messages)
    stated = stated_drafts(session, messages)
    extracted = extract_drafts(session, [m for m in messages if not states_memories(m)])
    drafts = [d for d in [*stated, *extracted.drafts] if not already_recorded(d)]
    for draft in drafts:
        # The query encoder (ONNX): a memory is a sentence or two, and torch's per-call cost
        # would outweigh the rules many times over.
        draft.embedding = embed_query(draft.content)
    for draft in drafts:
        record(session.project, draft)
    through = messages[-1].seq if messages else session.enriched_through_seq
    more = through < session.enriched_through_seq
    MemoryExtraction.objects.filter(pk=extraction.pk).update(
        status=PENDING if more else DONE,
        error=extracted.note[:ERROR_CHARS],
        through_seq=through,
        method=extracted.method,
        extracted_at=timezone.now(),
    )
    if drafts:
        logger.info(
            "extracted %d memories from session %s through message %d (%s)",
            len(drafts),
            session.public_id,
            through,
            extracted.method,
        )
    return len(drafts)


def states_memories(message: Message) -> bool:
    metadata = message.metadata if isinstance(message.metadata, dict) else {}
    return bool(metadata.get("memory_stored"))


def already_recorded(draft) -> bool:
    """A replay (``through_seq`` moved back by hand, a restored backup): the same memory is
    already linked to the same message, so recording it again would only count an access."""
    messages = [e.message.pk for e in draft.evidence]
    return (
        bool(messages)
        and MemoryEvidence.objects.filter(
            message_id__in=messages,
            memory__fingerprint=fingerprint(draft.content),
            memory__type=draft.type,
        ).exists()
    )


def requeue_failed(now=None) -> int:
    now = now or timezone.now()
    requeued = 0
    for attempts in range(1, settings.ENRICHMENT_MAX_ATTEMPTS):
        requeued += MemoryExtraction.objects.filter(
            status=FAILED,
            attempts=attempts,
            extracted_at__lte=now - timedelta(minutes=2**attempts),
        ).update(status=PENDING)
    return requeued
