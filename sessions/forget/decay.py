"""A session's decay priority (0..1): high while it is new and read, fading when nobody reads it.

``priority = e^(−0.05·days since the last read) · e^(−0.01·days since creation)
+ min(0.2, 0.01·reads)``, clamped to 0..1 (a session never read counts from its creation).
It is stored in ``Session.decay_priority``: the read-count flush (``read_counts.py``) recomputes it
for the sessions just read, and ``update_priorities`` recomputes it for every live session
every 6 hours, since it falls with time alone. Search's ``recency`` option and the
``min_priority`` filter read the stored value.

The formula exists twice, once in Python (``priority``) and once in SQL (``priority_sql``)
for the bulk updates; tests/sessions/test_decay.py checks they agree.
"""

from __future__ import annotations

import logging
import math

from django.db import connection
from django.utils import timezone

logger = logging.getLogger(__name__)

READ_DECAY_PER_DAY = 0.05
AGE_DECAY_PER_DAY = 0.01
BOOST_PER_READ = 0.01
MAX_READ_BOOST = 0.2
BATCH_IDS = 5000  # sessions per statement: each batch is its own short transaction


def priority(days_since_access: float, days_since_creation: float, access_count: int) -> float:
    base = math.exp(-READ_DECAY_PER_DAY * max(0.0, days_since_access)) * math.exp(
        -AGE_DECAY_PER_DAY * max(0.0, days_since_creation)
    )
    return min(1.0, max(0.0, base + min(MAX_READ_BOOST, BOOST_PER_READ * access_count)))


def _days(now: str, then: str) -> str:
    return f"greatest(0.0, extract(epoch from ({now} - {then})) / 86400.0)"


def priority_sql(*, accessed: str, created: str, count: str, now: str) -> str:
    """``priority`` as a SQL expression over the given SQL expressions (columns, parameters)."""
    base = (
        f"exp(-{READ_DECAY_PER_DAY} * {_days(now, accessed)})"
        f" * exp(-{AGE_DECAY_PER_DAY} * {_days(now, created)})"
    )
    boost = f"least({MAX_READ_BOOST}, {BOOST_PER_READ} * ({count}))"
    return f"least(1.0, greatest(0.0, {base} + {boost}))::float8"


# A session's own columns, as the bulk update and the flush name them.
SESSION_PRIORITY = priority_sql(
    accessed="coalesce(s.last_accessed_at, s.created_at)",
    created="s.created_at",
    count="s.access_count",
    now="%(now)s::timestamptz",
)


def update_priorities(now=None) -> int:
    """Recompute the priority of every live session, by id range; returns how many changed.
    Only rows whose value moves by more than a rounding error are written."""
    now = now or timezone.now()
    changed = 0
    for low, high in id_ranges(BATCH_IDS):
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE agent_sessions_session s SET decay_priority = {SESSION_PRIORITY}"
                " WHERE s.id >= %(low)s AND s.id < %(high)s AND s.deleted_at IS NULL"
                f" AND abs(s.decay_priority - {SESSION_PRIORITY}) > 1e-6",
                {"now": now, "low": low, "high": high},
            )
            changed += cursor.rowcount
    logger.info("decay: %d session priorities updated", changed)
    return changed


def id_ranges(size: int):
    """[low, high) ranges of ``size`` session ids covering every session, lowest first."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT min(id), max(id) FROM agent_sessions_session")
        first, last = cursor.fetchone()
    if first is None:
        return
    for low in range(first, last + 1, size):
        yield low, low + size
