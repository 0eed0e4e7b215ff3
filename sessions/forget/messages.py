"""Remove one message for good (docs/api.md, "Deleting"), leaving a tombstone.

A single sensitive message (a pasted password, a customer's details) can be removed without
deleting its session. The message keeps its place (its seq, role, author, tool name and
ids, so the transcript still reads in order and a capture retried with its client id does
not bring it back) and says who removed it and when; everything that could hold its text
goes at once, in one transaction:

- its content, its tool output and metadata (and so its keyword index) are emptied;
- its vectors (chunks) are deleted;
- the keyword context of the messages around it (``sessions/capture/keyword_context.py``:
  two after it read its words) is computed again without it, and its own is dropped;
- the session's entities, summary, derived topics and session vector are dropped, and the
  session is queued to be enriched again from its first message, so entities seen only in
  the removed message do not come back (``sessions/enrich/session.py`` abandons a run that
  read the message before it was removed);
- the session's size shrinks by the message's bytes;
- a deletion record of scope "message" says who, when and why (no recovery deadline: this
  cannot be undone).

The session row is locked ``FOR UPDATE`` first, as a purge does: the embedding worker (which
writes chunks under the session's ``KEY SHARE``) and an enrichment (``NO KEY UPDATE``) wait,
and then find the message done and empty.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest
from django.http import Http404
from django.utils import timezone

from sessions import derived
from sessions.capture.keyword_context import BEFORE, forget_context, index_context
from sessions.enrich.pipeline import embed_followers_again
from sessions.forget.lifecycle import LifecycleConflict, in_trash_state
from sessions.forget.records import actor_label, record_deletion
from sessions.models import (
    KEYWORD_VECTORS,
    DeletionRecord,
    DeletionScope,
    EnrichmentStatus,
    Entity,
    Message,
    MessageChunk,
    Session,
)
from sessions.poke import poke_enrichment

logger = logging.getLogger(__name__)


class MessageAlreadyRemoved(LifecycleConflict):
    """The message is a tombstone already: when and by whom it was removed."""

    def __init__(self, session: Session, message: Message):
        super().__init__(
            f"message {message.seq} of session {session.public_id} was already removed by "
            f"{message.removed_by or 'someone'} on {message.removed_at:%Y-%m-%d %H:%M} UTC",
            {
                "state": "removed",
                "removed_at": message.removed_at.isoformat(),
                "removed_by": message.removed_by,
            },
        )


@dataclass(frozen=True)
class Removal:
    message: Message  # the tombstone
    bytes: int  # what the session's size shrank by
    record: DeletionRecord


def tombstone_text(message) -> str | None:
    """What a removed message shows in place of its content (API, exports, the transcript
    page); None for any other message."""
    if message.removed_at is None:
        return None
    return f"removed by {message.removed_by or 'someone'} on {message.removed_at:%Y-%m-%d}"


def remove_message(session: Session, seq: int, *, by, reason: str = "") -> Removal:
    """Replace message ``seq`` of ``session`` (one the caller may see) by a tombstone, as
    ``by`` (a user or a token principal). Http404 when the session has no such message;
    MessageAlreadyRemoved when it is a tombstone already; LifecycleConflict when the session
    is in the trash (restore it first: a trashed session is not edited)."""
    with transaction.atomic():
        locked = Session.objects.select_for_update().filter(pk=session.pk).first()
        if locked is None:
            raise Http404(f"session {session.public_id} no longer exists")
        if locked.deleted_at is not None:
            raise LifecycleConflict(
                f"session {session.public_id} is in the trash; restore it before removing "
                "one of its messages",
                in_trash_state(locked),
            )
        message = Message.objects.of_session(locked).filter(seq=seq).defer(*KEYWORD_VECTORS).first()
        if message is None:
            raise Http404(f"session {session.public_id} has no message {seq}")
        if message.removed_at is not None:
            raise MessageAlreadyRemoved(locked, message)
        size = len(message.content.encode())
        # A title taken from this message (captures name a session by its first line) goes
        # with it.
        title_stem = locked.title.rstrip("…").strip()
        if title_stem and title_stem in message.content:
            Session.objects.filter(pk=locked.pk).update(title="")
        _tombstone(message, by)
        _forget_derived(locked, message)
        derived.message_removed(locked, message)
        Session.objects.filter(pk=locked.pk).update(
            size_bytes=Greatest(F("size_bytes") - size, Value(0))
        )
        [record] = record_deletion(
            [locked],
            DeletionScope.MESSAGE,
            by=by,
            reason=reason,
            criteria={"seq": seq},
            messages=1,
            size=size,
            recoverable=False,
        )
        transaction.on_commit(poke_enrichment)
    session.refresh_from_db()
    logger.info("message %d of session %s removed by %s", seq, session.public_id, record.actor)
    return Removal(message=message, bytes=size, record=record)


def _tombstone(message: Message, by) -> None:
    """Empty the message and mark it removed (done: nothing left to embed)."""
    message.content = ""
    message.metadata = {}
    message.token_count = 0
    message.removed_at = timezone.now()
    message.removed_by = actor_label(by)[:200]
    message.enrichment_status = EnrichmentStatus.DONE
    message.enrichment_error = ""
    message.claimed_by = None
    message.save(
        update_fields=[
            "content",
            "metadata",
            "token_count",
            "removed_at",
            "removed_by",
            "enrichment_status",
            "enrichment_error",
            "claimed_by",
        ]
    )


def _forget_derived(session: Session, message: Message) -> None:
    """Drop what was derived from the message: its vectors, its neighbours' keyword
    context and the next message's vector (embedded with its words as context), and the
    session's enrichment (rebuilt from scratch by the worker)."""
    MessageChunk.objects.filter(message=message).delete()
    embed_followers_again(session.pk, [message.seq])
    # The one before it and the BEFORE after it read its words; then its own goes.
    index_context(session.pk, message.seq, through=message.seq + BEFORE)
    forget_context(message.pk)
    Entity.objects.of_session(session).delete()
    metadata = dict(session.metadata)
    derived = metadata.pop("topics_derived", False)
    metadata.pop("summary_method", None)
    Session.objects.filter(pk=session.pk).update(
        summary="",
        embedding=None,
        embedding_model="",
        topics=[] if derived else session.topics,
        metadata=metadata,
        enriched_through_seq=-1,
        enrichment_status=EnrichmentStatus.PENDING,
        enrichment_attempts=0,
        enrichment_error="",
    )
