"""A memory's status when it is recorded, and the history of its changes.

The rules ``record`` applies to a new memory (is it proposed for review, does it repeat a
rejection) and ``note``, which keeps one change of status in the memory's history. The
changes themselves (accept, reject, revert…) are ``memories/capture/review.py``'s.
"""

from __future__ import annotations

from django.db.models import Value
from pgvector.django import CosineDistance

from memories.capture import consistency
from memories.models import Memory, MemoryEvent, MemoryStatus, MemoryType, Origin
from sessions.capture.redaction import redact_for

# What a confidence label counts as against the project's threshold (0..1).
LABEL_SCORES = {
    "high": 0.9,
    "explicit": 0.9,
    "medium": 0.7,
    "": 0.5,  # the extractor did not say
    "low": 0.4,
    "inferred": 0.4,
    "uncertain": 0.2,
}
# A new statement this close in meaning to a rejected one (and of the same polarity) is the
# rejected statement again: the restatement threshold (``consistency.MERGE_SIMILARITY``).
REJECTION_SIMILARITY = consistency.MERGE_SIMILARITY
# Origins whose statements a rejection stops: what machines read, not what someone records.
REVIEWED_ORIGINS = {Origin.EXTRACTOR, Origin.IMPORT}
MAX_REASON_CHARS = 500


def confidence_score(label: str) -> float:
    """A confidence label as a number (an unknown label counts as unstated)."""
    label = (label or "").strip().lower()
    try:
        return max(0.0, min(1.0, float(label)))
    except ValueError:
        return LABEL_SCORES.get(label, LABEL_SCORES[""])


def needs_review(project, draft) -> bool:
    """An extracted draft below its project's confidence threshold waits for review."""
    if draft.origin != Origin.EXTRACTOR or draft.type == MemoryType.AGENT_STATE:
        return False
    return confidence_score(draft.confidence) < project.memory_review_threshold


def initial_reason(project, draft, status: str) -> str:
    if status == MemoryStatus.PROPOSED:
        return (
            f"extracted with confidence {draft.confidence or 'unstated'} "
            f"({confidence_score(draft.confidence):.1f}), below the project's review "
            f"threshold {project.memory_review_threshold:.2f}"
        )
    return f"recorded by {'a person' if draft.origin == Origin.PERSON else draft.origin}"


def rejection_of(project, draft, fp: str) -> Memory | None:
    """The rejection ``draft`` repeats, if any: a rejected memory of the project with the
    same words, or one at least ``REJECTION_SIMILARITY`` close in meaning that says it the
    same way round (not negated where the other is, as ``consistency.restated`` asks)."""
    if draft.origin not in REVIEWED_ORIGINS:
        return None
    # A rejection of the same audience (memories/visibility.py): another's is not read.
    rejected = Memory.objects.filter(
        project=project,
        status=MemoryStatus.REJECTED,
        owner_id=draft.owner_id,
        visibility=draft.visibility,
    )
    same = rejected.filter(fingerprint=fp).order_by("id").first()
    if same is not None or draft.embedding is None:
        return same
    near = (
        rejected.filter(embedding__isnull=False)
        .annotate(distance=CosineDistance("embedding", draft.embedding) + Value(0.0))
        .filter(distance__lte=1.0 - REJECTION_SIMILARITY)
        .order_by("distance")
        .defer("embedding", "search_vector")[: consistency.NEAREST]
    )
    for memory in near:
        if consistency.negated(memory.content) == consistency.negated(draft.content):
            return memory
    return None


def _who(by) -> tuple[object, str]:
    """A user (kept as the event's person), or the name of what acted (a token, an agent)."""
    if getattr(by, "pk", None) is not None and not getattr(by, "is_token", False):
        return by, ""
    if isinstance(by, str):
        return None, by[:64]
    return None, (str(by) if by is not None else "system")[:64]


def note(
    memory: Memory,
    from_status: str,
    to_status: str,
    *,
    by=None,
    reason: str = "",
    related: Memory | None = None,
) -> MemoryEvent:
    """Keep one change of ``memory``'s status (or a finding's resolution) in its history."""
    user, actor = _who(by)
    return MemoryEvent.objects.create(
        team_id=memory.team_id,
        memory_id=memory.pk,
        from_status=from_status,
        to_status=to_status,
        by=user if getattr(user, "pk", None) else None,
        actor=actor,
        reason=redact_for(memory.project, (reason or "").strip())[0][:MAX_REASON_CHARS],
        related=related,
    )


def note_many(memories, from_status: str | None, to_status: str, *, by=None, reason: str = ""):
    """The same change of many memories (bulk deletion), in one insert."""
    user, actor = _who(by)
    rows = [
        MemoryEvent(
            team_id=m.team_id,
            memory_id=m.pk,
            from_status=from_status if from_status is not None else m.status,
            to_status=to_status,
            by=user if getattr(user, "pk", None) else None,
            actor=actor,
            reason=(reason or "")[:MAX_REASON_CHARS],
        )
        for m in memories
    ]
    return MemoryEvent.objects.bulk_create(rows)
