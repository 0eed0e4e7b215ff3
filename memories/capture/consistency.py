"""Keeping memories consistent (issue 17 §3): a restatement merges, a contradiction supersedes.

- **Restated**: an active memory of the same type in the project with the same words
  (fingerprint), or nearly the same meaning (cosine similarity ≥ ``MERGE_SIMILARITY``)
  and the same polarity, and no other topic. The new one is folded into it.
  Also one with the same ``topic`` and the same ``details.stance`` (the side it takes: the
  option chosen, for or against), however it is worded.
- **Contradicted**: an active memory of the same type and the same ``topic`` key (a changed
  preference, a reversed decision; with another stance when both say theirs), or one close
  in meaning (≥ ``CONFLICT_SIMILARITY``) whose polarity differs or that the new text says
  it replaces ("instead", "no longer", "switch to"; not "instead of Y", which names the
  alternative a decision rejected, not an earlier memory). The new memory supersedes it;
  the old one stays as history.

Only decisions, preferences, facts and agent states can contradict: two findings about
the same thing are two findings.
"""

from __future__ import annotations

import re

from django.db.models import Case, Value, When
from pgvector.django import CosineDistance

from memories.models import Memory, MemoryScope, MemoryStatus, MemoryType

MERGE_SIMILARITY = 0.90
CONFLICT_SIMILARITY = 0.72
NEAREST = 5
CONTRADICTABLE = {
    MemoryType.DECISION,
    MemoryType.PREFERENCE,
    MemoryType.FACT,
    MemoryType.AGENT_STATE,
}
_NEGATION = re.compile(
    r"\b(not|no|never|don'?t|doesn'?t|won'?t|isn'?t|aren'?t|shouldn'?t|avoid|stop|"
    r"without|dislikes?|hates?)\b",
    re.I,
)
_REPLACES = re.compile(
    r"\b(instead(?! of)|no longer|any ?more|switch(ed|ing)? (to|from|back)|"
    r"changed? (my|our) mind|reverse[ds]?|replace[ds]?|now prefers?|moved? (to|from)|actually)\b",
    re.I,
)


def _peers(project, draft, *, proposed: bool = False):
    """Active memories of the draft's kind; with ``proposed``, those waiting for review too
    (a proposal said again merges into it rather than queueing twice)."""
    if proposed:
        peers = Memory.objects.live().filter(
            project=project,
            type=draft.type,
            status__in=(MemoryStatus.ACTIVE, MemoryStatus.PROPOSED),
        )
    else:
        peers = Memory.objects.active().filter(project=project, type=draft.type)
    # One audience's memories only (memories/visibility.py): a private memory never merges
    # into or supersedes one the team reads, nor the other way round.
    peers = peers.filter(owner_id=draft.owner_id, visibility=draft.visibility)
    if draft.scope == MemoryScope.SESSION:
        peers = peers.filter(session=draft.session)
    if draft.type == MemoryType.AGENT_STATE:
        peers = peers.filter(agent=draft.agent)
    return peers


def negated(text: str) -> bool:
    return bool(_NEGATION.search(text))


def replaces(text: str) -> bool:
    return bool(_REPLACES.search(text))


def _nearest(
    project, draft, min_similarity: float, *, proposed: bool = False
) -> list[tuple[Memory, float]]:
    if draft.embedding is None:
        return []
    # An exact scan of the project's peers, never the HNSW index ("+ 0" keeps the planner
    # off it): the index holds every team's memories (and old row versions until a vacuum),
    # and a filtered index scan stops after its first candidates, so where other projects
    # hold the same words it would find no peer, and a paraphrase would not merge.
    rows = (
        _peers(project, draft, proposed=proposed)
        .filter(embedding__isnull=False)
        .annotate(distance=CosineDistance("embedding", draft.embedding) + Value(0.0))
        .filter(distance__lte=1.0 - min_similarity)
        .order_by("distance")[:NEAREST]
    )
    return [(m, 1.0 - m.distance) for m in rows]


def restated(project, draft, fingerprint: str) -> Memory | None:
    if not draft.reconcile:
        return None
    peers = _peers(project, draft, proposed=True)
    # The active one first: a statement both accepted and proposed merges into the accepted.
    first = ("-is_active", "id")
    peers = peers.annotate(
        is_active=Case(When(status=MemoryStatus.ACTIVE, then=Value(1)), default=Value(0))
    )
    same = peers.filter(fingerprint=fingerprint).order_by(*first).first()
    if same is not None:
        return same
    stance = _stance(draft)
    if stance:
        same = peers.filter(topic=draft.topic, details__stance=stance)
        same = same.order_by(*first).first()
        if same is not None:
            return same
    for memory, _ in _nearest(project, draft, MERGE_SIMILARITY, proposed=True):
        if draft.topic and memory.topic and draft.topic != memory.topic:
            continue
        if negated(memory.content) != negated(draft.content) or replaces(draft.content):
            continue  # close in words, opposite in meaning: a contradiction, not the same
        return memory
    return None


def _stance(draft) -> str:
    """Which side of its topic a memory takes, when its writer says (``details.stance``, set
    by the extractor: the option chosen, for or against): same topic and stance is a
    restatement, same topic and another stance a contradiction."""
    stance = draft.details.get("stance") if draft.topic and isinstance(draft.details, dict) else ""
    return stance if isinstance(stance, str) else ""


def contradicted(project, draft) -> list[Memory]:
    if not draft.reconcile or draft.type not in CONTRADICTABLE:
        return []
    found: dict[int, Memory] = {}
    if draft.topic:
        for memory in _peers(project, draft).filter(topic=draft.topic):
            if not _stance(draft) or memory.details.get("stance") != _stance(draft):
                found[memory.pk] = memory
    for memory, _ in _nearest(project, draft, CONFLICT_SIMILARITY):
        if memory.pk in found:
            continue
        if negated(memory.content) != negated(draft.content) or replaces(draft.content):
            found[memory.pk] = memory
    return list(found.values())
