"""A memory's priority by its type (docs/memories.md): decisions fade slowly, agent states fast.

``priority = base · e^(−rate·days since the last read) · e^(−0.01·days since it was said)
+ min(0.2, boost·reads)``, then the type's floors, clamped to 0..1:

- a pinned memory keeps its base priority (it never decays);
- an explicit preference never falls below 0.6, an inferred one below 0.3;
- an open critical finding stays at 0.8 or more; a resolved finding decays 1.5× faster;
- a high-impact decision stays at 0.9 or more.

The formula exists in Python (``priority``) and in SQL (``PRIORITY_SQL``, for the periodic
bulk update); tests check they agree.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from django.db import connection
from django.utils import timezone

from memories.models import MemoryType

logger = logging.getLogger(__name__)

AGE_DECAY_PER_DAY = 0.01
MAX_READ_BOOST = 0.2
RESOLVED_RATE_FACTOR = 1.5
EXPLICIT_PREFERENCE_FLOOR = 0.6
INFERRED_PREFERENCE_FLOOR = 0.3
OPEN_CRITICAL_FLOOR = 0.8
HIGH_IMPACT_DECISION_FLOOR = 0.9
BATCH_IDS = 5000


@dataclass(frozen=True)
class DecayRule:
    base_priority: float
    rate: float  # per day without a read
    boost: float  # per read


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
        return min(1.0, max(0.0, base))
    rule = RULES[kind]
    rate = rule.rate * (RESOLVED_RATE_FACTOR if resolution == "resolved" else 1.0)
    value = base * math.exp(-rate * max(0.0, days_since_access)) * math.exp(
        -AGE_DECAY_PER_DAY * max(0.0, days_since_creation)
    ) + min(MAX_READ_BOOST, rule.boost * access_count)
    value = max(value, _floor(kind, confidence, severity, resolution, impact))
    return min(1.0, max(0.0, value))


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


def _days(now: str, then: str) -> str:
    return f"greatest(0.0, extract(epoch from ({now} - {then})) / 86400.0)"


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
_NOW = "%(now)s::timestamptz"
_LAST_READ = "coalesce(m.last_accessed_at, m.occurred_at)"
_DECAYED = (
    f"m.base_priority * exp(-{_RATE} * {_days(_NOW, _LAST_READ)})"
    f" * exp(-{AGE_DECAY_PER_DAY} * {_days(_NOW, 'm.occurred_at')})"
    f" + least({MAX_READ_BOOST}, {_case('boost')} * m.access_count)"
)
# Every memory's priority as SQL over its own columns (alias ``m``) and ``%(now)s``.
PRIORITY_SQL = (
    "(CASE WHEN m.pinned THEN least(1.0, greatest(0.0, m.base_priority)) ELSE "
    f"least(1.0, greatest(0.0, greatest({_DECAYED}, {_FLOOR}))) END)::float8"
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
    now = now or timezone.now()
    changed = 0
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(min(id), 0), coalesce(max(id), 0) FROM memories_memory")
        low, high = cursor.fetchone()
    for start in range(low, high + 1, BATCH_IDS):
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE memories_memory m SET priority = {PRIORITY_SQL}"
                " WHERE m.id >= %(low)s AND m.id < %(high)s AND m.status <> 'deleted'"
                f" AND abs(m.priority - {PRIORITY_SQL}) > 1e-6",
                {"now": now, "low": start, "high": start + BATCH_IDS},
            )
            changed += cursor.rowcount
    logger.info("decay: %d memory priorities updated", changed)
    return changed
