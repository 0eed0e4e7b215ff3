"""Session enrichment: entities, summary, topics and the session's vector, progressively.

Only the messages past ``Session.enriched_through_seq`` are read, so a session that grows is
enriched by its new part: entity counts are added to, the summary is extended
(``summarize_progressively``), and the session vector is the embedding of the summary.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.utils import timezone

from sessions.embedding import embed, model_name
from sessions.entities import extract_session
from sessions.models import EnrichmentStatus, Entity, Message, Session
from sessions.summary import summarize_progressively, summarize_with_fallback
from sessions.topics import derive_topics

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
    """Enrich ``session`` (locked by the caller) with its messages not yet enriched."""
    new = list(
        Message.objects.filter(session=session, seq__gt=session.enriched_through_seq)
        .order_by("seq")
        .only("id", "seq", "role", "author", "content", "tool_name", "tool_call_id", "metadata")[
            :MAX_MESSAGES_PER_STEP
        ]
    )
    if not new:
        Session.objects.filter(pk=session.pk).update(
            enrichment_status=EnrichmentStatus.DONE, enrichment_error="", enriched_at=timezone.now()
        )
        return
    _merge_entities(session, new)
    key_entities = [
        (e.type, e.value)
        for e in Entity.objects.filter(session=session).order_by("-count", "type")[:KEY_ENTITIES]
    ]
    if session.summary and session.enriched_through_seq >= 0:
        summary = summarize_progressively(session.summary, new, entities=key_entities)
    else:
        summary, method = summarize_with_fallback(new, entities=key_entities, llm=llm_config())
        session.metadata = {**session.metadata, "summary_method": method}
    fields = {
        "summary": summary,
        "metadata": session.metadata,
        "enriched_through_seq": new[-1].seq,
        "enriched_at": timezone.now(),
        "enrichment_error": "",
    }
    if not session.topics or session.metadata.get("topics_derived"):
        derived = derive_topics(new, entities=key_entities, limit=MAX_DERIVED_TOPICS)
        fields["topics"] = list(dict.fromkeys([*session.topics, *derived]))[:MAX_DERIVED_TOPICS]
        fields["metadata"] = {**session.metadata, "topics_derived": True}
    if summary:
        fields["embedding"] = embed([summary])[0]
        fields["embedding_model"] = model_name()
    # More backlog than one step reads: stay pending, the next step continues.
    more = Message.objects.filter(session=session, seq__gt=new[-1].seq).exists()
    fields["enrichment_status"] = EnrichmentStatus.PENDING if more else EnrichmentStatus.DONE
    # Conditional on nothing else having changed it meanwhile (we hold the row lock anyway).
    Session.objects.filter(pk=session.pk).update(**fields)
    logger.info(
        "enriched session %s through message %d (%d new)", session.public_id, new[-1].seq, len(new)
    )


def _merge_entities(session: Session, messages: list[Message]) -> None:
    extracted = extract_session(messages)
    if not extracted:
        return
    existing = {
        (e.type, e.normalized): e
        for e in Entity.objects.filter(
            session=session, normalized__in=[x.normalized[:500] for x in extracted]
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
    Entity.objects.bulk_create(to_create, batch_size=500)
    Entity.objects.bulk_update(to_update, ["count"], batch_size=500)
