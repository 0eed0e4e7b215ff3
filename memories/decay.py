"""A memory's priority by its type (docs/memories.md): decisions fade slowly, agent states fast.

The one decay model (``core/decay_model.py``) with a rule per type:
``priority = base · e^(−rate·days since the last read) · e^(−0.01·days since it was said)
+ min(0.2, boost·reads)``, then the type's floors, clamped to 0..1:

- a pinned memory keeps its base priority (it never decays);
- an explicit preference never falls below 0.6, an inferred one below 0.3;
- an open critical finding stays at 0.8 or more; a resolved finding decays 1.5× faster;
- a high-impact decision stays at 0.9 or more.

The rules and floors are written in Python (``priority``) and in SQL (``PRIORITY_SQL``, for
the periodic bulk update and a read's update); tests check they agree.
"""

from __future__ import annotations

import logging

from django.utils import timezone

from core import decay_model
from core.decay_model import DecayRule
from memories.models import MemoryType

logger = logging.getLogger(__name__)

RESOLVED_RATE_FACTOR = 1.5
EXPLICIT_PREFERENCE_FLOOR = 0.6
INFERRED_PREFERENCE_FLOOR = 0.3
OPEN_CRITICAL_FLOOR = 0.8
HIGH_IMPACT_DECISION_FLOOR = 0.9
TABLE = "memories_memory"


# docs/memories.md. Learnings and facts were not in the first table: learnings "persist longer" than
# working memory, so they decay like decisions; facts (chat-style sessions) like findings.
RULES = {
    MemoryType.DECISION: DecayRule(0.95, 0.03, 0.02),
    MemoryType.FINDING: DecayRule(0.90, 0.04, 0.015),
    MemoryType.PREFERENCE: DecayRule(0.85, 0.02, 0.03),
    MemoryType.LEARNING: DecayRule(0.90, 0.03, 0.02),
    MemoryType.AGENT_STATE: DecayRule(0.80, 0.06, 0.01),
    MemoryType.FACT: DecayRule(0.90, 0.04, 0.015),
}


def base_priority(kind: str) -> float:
    return RULES[kind].base_priority


def priority(
    kind: str,
    *,
    base: float,
    days_since_access: float,
    days_since_creation: float,
    access_count: int,
    pinned: bool = False,
    confidence: str = "",
    severity: str = "",
    resolution: str = "",
    impact: str = "",
) -> float:
    if pinned:
        return decay_model.clamped(base)
    rule = RULES[kind]
    rate = rule.rate * (RESOLVED_RATE_FACTOR if resolution == "resolved" else 1.0)
    value = decay_model.faded(
        base, rate, rule.boost, days_since_access, days_since_creation, access_count
    )
    return decay_model.clamped(max(value, _floor(kind, confidence, severity, resolution, impact)))


def _floor(kind: str, confidence: str, severity: str, resolution: str, impact: str) -> float:
    if kind == MemoryType.PREFERENCE:
        if confidence == "explicit":
            return EXPLICIT_PREFERENCE_FLOOR
        if confidence == "inferred":
            return INFERRED_PREFERENCE_FLOOR
    if kind == MemoryType.FINDING and severity == "critical" and resolution != "resolved":
        return OPEN_CRITICAL_FLOOR
    if kind == MemoryType.DECISION and impact == "high":
        return HIGH_IMPACT_DECISION_FLOOR
    return 0.0


def _case(column: str) -> str:
    whens = " ".join(f"WHEN '{kind}' THEN {getattr(rule, column)}" for kind, rule in RULES.items())
    return f"(CASE m.type {whens} END)"


_RATE = (
    f"{_case('rate')} * (CASE WHEN m.resolution = 'resolved' "
    f"THEN {RESOLVED_RATE_FACTOR} ELSE 1.0 END)"
)
_FLOOR = f"""(CASE
    WHEN m.type = 'preference' AND m.confidence = 'explicit' THEN {EXPLICIT_PREFERENCE_FLOOR}
    WHEN m.type = 'preference' AND m.confidence = 'inferred' THEN {INFERRED_PREFERENCE_FLOOR}
    WHEN m.type = 'finding' AND m.severity = 'critical' AND m.resolution <> 'resolved'
        THEN {OPEN_CRITICAL_FLOOR}
    WHEN m.type = 'decision' AND m.details->>'implementation_impact' = 'high'
        THEN {HIGH_IMPACT_DECISION_FLOOR}
    ELSE 0.0 END)"""
_DECAYED = decay_model.faded_sql(
    base="m.base_priority",
    rate=_RATE,
    boost=_case("boost"),
    read_at="coalesce(m.last_accessed_at, m.occurred_at)",
    created="m.occurred_at",
    reads="m.access_count",
    now="%(now)s::timestamptz",
)
# Every memory's priority as SQL over its own columns (alias ``m``) and ``%(now)s``.
PRIORITY_SQL = (
    f"(CASE WHEN m.pinned THEN {decay_model.clamped_sql('m.base_priority')} ELSE "
    f"{decay_model.clamped_sql(f'greatest({_DECAYED}, {_FLOOR})')} END)::float8"
)


def priority_of(memory, now=None) -> float:
    """``memory``'s priority now, from its fields (after a read, an edit, a resolve)."""
    now = now or timezone.now()
    last = memory.last_accessed_at or memory.occurred_at
    return priority(
        memory.type,
        base=memory.base_priority,
        days_since_access=(now - last).total_seconds() / 86400,
        days_since_creation=(now - memory.occurred_at).total_seconds() / 86400,
        access_count=memory.access_count,
        pinned=memory.pinned,
        confidence=memory.confidence,
        severity=memory.severity,
        resolution=memory.resolution,
        impact=str((memory.details or {}).get("implementation_impact", "")),
    )


def update_priorities(now=None) -> int:
    """Recompute every live memory's priority, by id range; returns how many changed."""
    changed = decay_model.recompute(
        TABLE, "m", "priority", PRIORITY_SQL, "m.status <> 'deleted'", now or timezone.now()
    )
    logger.info("decay: %d memory priorities updated", changed)
    return changed
