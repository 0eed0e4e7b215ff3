"""A session's decay priority (0..1): the one decay model (``decay_model.py``) with the
session's rule, high while it is new and read, fading when nobody reads it.

``priority = e^(−0.05·days since the last read) · e^(−0.01·days since creation)
+ min(0.2, 0.01·reads)``, clamped to 0..1 (a session never read counts from its creation).
It is stored in ``Session.decay_priority``: the read-count flush (``read_counts.py``)
recomputes it for the sessions just read, and ``update_priorities`` recomputes it for every
live session every 6 hours, since it falls with time alone. Search's ``recency`` option and
the ``min_priority`` filter read the stored value.

tests/sessions/forget/test_decay.py checks that ``priority`` and ``priority_sql`` agree.
"""

from __future__ import annotations

import logging

from django.utils import timezone

from core import decay_model
from core.decay_model import DecayRule

logger = logging.getLogger(__name__)

SESSION_RULE = DecayRule(base_priority=1.0, rate=0.05, boost=0.01)
TABLE = "agent_sessions_session"


def priority(days_since_access: float, days_since_creation: float, access_count: int) -> float:
    rule = SESSION_RULE
    return decay_model.clamped(
        decay_model.faded(
            rule.base_priority,
            rule.rate,
            rule.boost,
            days_since_access,
            days_since_creation,
            access_count,
        )
    )


def priority_sql(*, accessed: str, created: str, count: str, now: str) -> str:
    """``priority`` as a SQL expression over the given SQL expressions (columns, parameters)."""
    rule = SESSION_RULE
    faded = decay_model.faded_sql(
        base=str(rule.base_priority),
        rate=str(rule.rate),
        boost=str(rule.boost),
        read_at=accessed,
        created=created,
        reads=count,
        now=now,
    )
    return f"{decay_model.clamped_sql(faded)}::float8"


# A session's own columns, as the bulk update and the flush name them.
SESSION_PRIORITY = priority_sql(
    accessed="coalesce(s.last_accessed_at, s.created_at)",
    created="s.created_at",
    count="s.access_count",
    now="%(now)s::timestamptz",
)


def update_priorities(now=None) -> int:
    """Recompute the priority of every live session, by id range; returns how many changed."""
    changed = decay_model.recompute(
        TABLE,
        "s",
        "decay_priority",
        SESSION_PRIORITY,
        "s.deleted_at IS NULL",
        now or timezone.now(),
    )
    logger.info("decay: %d session priorities updated", changed)
    return changed


def id_ranges(size: int):
    """[low, high) ranges of ``size`` session ids covering every session, lowest first."""
    return decay_model.id_ranges(TABLE, size)
