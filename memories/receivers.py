"""What memories do when sessions change (``sessions/signals.py``)."""

from __future__ import annotations

from django.db import transaction
from django.dispatch import receiver
from django.utils import timezone

from memories import decay
from memories.models import MemoryExtraction
from memories.poke import poke_extraction
from sessions.models import EnrichmentStatus
from sessions.signals import decay_due, session_enriched


@receiver(session_enriched)
def extraction_due(sender, session_id: int, team_id: int, through_seq: int, **kwargs) -> None:
    """The session's new messages are enriched: extract memories from them next."""
    extraction, created = MemoryExtraction.objects.get_or_create(
        session_id=session_id, defaults={"team_id": team_id}
    )
    if created or extraction.through_seq < through_seq:
        MemoryExtraction.objects.filter(pk=extraction.pk).exclude(
            status=EnrichmentStatus.PENDING
        ).update(status=EnrichmentStatus.PENDING, attempts=0, error="", updated_at=timezone.now())
        transaction.on_commit(poke_extraction)


@receiver(decay_due)
def decay_memories(sender, now, **kwargs) -> None:
    decay.update_priorities(now)
