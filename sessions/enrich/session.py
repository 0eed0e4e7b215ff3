"""Session enrichment: entities, summary, topics and the session's vector, progressively.

Only the messages past ``Session.enriched_through_seq`` are read, so a session that grows is
enriched by its new part: entity counts are added to, the summary is extended
(``summarize_progressively``), and the session vector is the embedding of the summary.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from sessions.embedding.backend import embed
from sessions.embedding.model_files import model_name
from sessions.enrich import aliases
from sessions.enrich.entities import extract_session
from sessions.enrich.summary import summarize_progressively, summarize_with_fallback
from sessions.enrich.topics import derive_topics
from sessions.models import EnrichmentStatus, Entity, Message, Session
from sessions.signals import session_enriched

logger = logging.getLogger(__name__)

KEY_ENTITIES = 6
MAX_DERIVED_TOPICS = 5
# Messages read per enrichment step; a longer backlog is handled over several steps.
MAX_MESSAGES_PER_STEP = 5000


def llm_config() -> dict | None:
    if not settings.SUMMARY_LLM_URL:
        return None
    return {
        "url": settings.SUMMARY_LLM_URL,
        "model": settings.SUMMARY_LLM_MODEL,
        "api_key": settings.SUMMARY_LLM_API_KEY,
    }


def enrich_session(session: Session) -> None:
    """Enrich ``session`` (claimed by the caller) with its messages not yet enriched.

    Everything slow (entities, summary, topics, the summary's vector) is computed before any
    row is locked; then the session row is locked ``FOR NO KEY UPDATE`` for the few writes,
    so a capture appending to the session waits milliseconds, not the whole enrichment.
    A run that a message removal overtook (``sessions/forget/messages.py``) writes nothing.
    """
    new = list(
        Message.objects.filter(session=session, seq__gt=session.enriched_through_seq)
        .order_by("seq")
        .only(
            "id",
            "seq",
            "role",
            "author",
            "content",
            "tool_name",
            "tool_call_id",
            "metadata",
            "removed_at",
        )[:MAX_MESSAGES_PER_STEP]
    )
    fields = {"enriched_at": timezone.now(), "enrichment_error": ""}
    to_create, to_update, learned = [], [], None
    if new:
        to_create, to_update, key_entities = _entity_changes(session, new)
        fields.update(_summary_fields(session, new, key_entities))
        learned = aliases.learn(session, new, from_scratch=session.enriched_through_seq < 0)
        fields["metadata"][aliases.METADATA_KEY] = learned.contribution
    elif session.summary and session.embedding is None:
        # The summary was rewritten (anonymised): its vector is made again.
        fields.update(embedding=embed([session.summary])[0], embedding_model=model_name())
    with transaction.atomic():
        locked = (
            Session.objects.filter(pk=session.pk)
            .select_for_update(no_key=True)
            .values_list("enriched_through_seq", "deleted_at", "visibility")
            .first()
        )
        if locked is None:
            logger.info("session %s was purged while being enriched", session.public_id)
            return
        through, deleted_at, visibility = locked
        if _overtaken(session, through, new):
            logger.info("session %s was compacted or lost a message meanwhile", session.public_id)
            return  # left pending: enriched again, from scratch, from the text as it is now
        Entity.objects.bulk_create(to_create, batch_size=500)
        Entity.objects.bulk_update(to_update, ["count"], batch_size=500)
        if learned:
            # A session in the trash counts for no alias, nor one the team does not read
            # (its contribution is withheld: sessions/enrich/aliases.py); the visibility is
            # read under the lock, which a change of it waits for.
            if deleted_at is None and aliases.shared(visibility):
                learned.save(session)
            fields["metadata"] = aliases.with_withheld(fields["metadata"], visibility)
        # Read under the lock: a capture that committed meanwhile left more to do.
        through = new[-1].seq if new else session.enriched_through_seq
        more = Message.objects.filter(session=session, seq__gt=through).exists()
        fields["enrichment_status"] = EnrichmentStatus.PENDING if more else EnrichmentStatus.DONE
        Session.objects.filter(pk=session.pk).update(**fields)
    if new:
        through_seq, team_id = new[-1].seq, session.team_id
        transaction.on_commit(
            lambda: session_enriched.send(
                sender=Session, session_id=session.pk, team_id=team_id, through_seq=through_seq
            )
        )
        logger.info(
            "enriched session %s through message %d (%d new)",
            session.public_id,
            new[-1].seq,
            len(new),
        )


def _overtaken(session: Session, through: int, new: list[Message]) -> bool:
    """Text this run read is gone since: a compaction or a message's removal reset the
    enrichment (``enriched_through_seq``), or a removal emptied a message this run read."""
    if through != session.enriched_through_seq:
        return True
    read_whole = [m.id for m in new if m.removed_at is None]
    return Message.objects.filter(id__in=read_whole, removed_at__isnull=False).exists()


def _summary_fields(session: Session, new: list[Message], key_entities) -> dict:
    """Summary, derived topics and the session vector, extended by the ``new`` messages."""
    metadata = dict(session.metadata)
    if session.summary and session.enriched_through_seq >= 0:
        summary = summarize_progressively(session.summary, new, entities=key_entities)
    else:
        summary, method = summarize_with_fallback(new, entities=key_entities, llm=llm_config())
        metadata["summary_method"] = method
    fields = {"summary": summary, "enriched_through_seq": new[-1].seq}
    if not session.topics or metadata.get("topics_derived"):
        derived = derive_topics(new, entities=key_entities, limit=MAX_DERIVED_TOPICS)
        fields["topics"] = list(dict.fromkeys([*session.topics, *derived]))[:MAX_DERIVED_TOPICS]
        metadata["topics_derived"] = True
    fields["metadata"] = metadata
    if summary:
        fields["embedding"] = embed([summary])[0]
        fields["embedding_model"] = model_name()
    return fields


def _entity_changes(session: Session, messages: list[Message]):
    """New and updated entities of ``messages``, and the session's key entities once they
    are merged (computed here, written by the caller under the session lock)."""
    extracted = extract_session(messages)
    existing = {
        (e.type, e.normalized): e
        for e in Entity.objects.filter(session=session).only(
            "id", "type", "value", "normalized", "count"
        )
    }
    to_create, to_update = [], []
    for item in extracted:
        key = (item.type, item.normalized[:500])
        if key in existing:
            entity = existing[key]
            entity.count += item.count
            to_update.append(entity)
        else:
            to_create.append(
                Entity(
                    team_id=session.team_id,
                    session=session,
                    message_id=messages[item.first_index].id,
                    type=item.type,
                    value=item.value[:500],
                    normalized=item.normalized[:500],
                    context=item.context,
                    count=item.count,
                )
            )
    merged = [*existing.values(), *to_create]
    merged.sort(key=lambda e: (-e.count, e.type))
    key_entities = [(e.type, e.value) for e in merged[:KEY_ENTITIES]]
    return to_create, to_update, key_entities
