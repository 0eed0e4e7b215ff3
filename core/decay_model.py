"""The one decay model of sessions and memories (seed 001 §7): a priority (0..1) that is
high while a row is new and read, and fades when nobody reads it.

``priority = base · e^(−rate·days since the last read) · e^(−0.01·days since creation)
+ min(0.2, boost·reads)``, then a kind's floor, clamped to 0..1. Each kind says its
``DecayRule`` (base, rate, boost): a session has one (``sessions/decay.py``), a
memory one per type plus its floors (``memories/decay.py``).

The formula is written here once in Python (``faded``, ``clamped``) and once in SQL
(``faded_sql``, ``clamped_sql``) for the bulk updates (``recompute``); the kinds' tests
check the two agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.db import connection

AGE_DECAY_PER_DAY = 0.01
MAX_READ_BOOST = 0.2
BATCH_IDS = 5000  # rows per statement of ``recompute``: each batch is its own short transaction


@dataclass(frozen=True)
class DecayRule:
    base_priority: float
    rate: float  # per day without a read
    boost: float  # per read


def faded(
    base: float,
    rate: float,
    boost: float,
    days_since_read: float,
    days_since_creation: float,
    reads: int,
) -> float:
    """The priority before floors and clamping (a clock a little ahead counts as 0 days)."""
    return base * math.exp(-rate * max(0.0, days_since_read)) * math.exp(
        -AGE_DECAY_PER_DAY * max(0.0, days_since_creation)
    ) + min(MAX_READ_BOOST, boost * reads)


def clamped(value: float) -> float:
    return min(1.0, max(0.0, value))


def days_sql(now: str, then: str) -> str:
    return f"greatest(0.0, extract(epoch from ({now} - {then})) / 86400.0)"


def faded_sql(
    *, base: str, rate: str, boost: str, read_at: str, created: str, reads: str, now: str
) -> str:
    """``faded`` as a SQL expression over the given SQL expressions (columns, parameters)."""
    return (
        f"{base} * exp(-{rate} * {days_sql(now, read_at)})"
        f" * exp(-{AGE_DECAY_PER_DAY} * {days_sql(now, created)})"
        f" + least({MAX_READ_BOOST}, {boost} * ({reads}))"
    )


def clamped_sql(value: str) -> str:
    return f"least(1.0, greatest(0.0, {value}))"


def id_ranges(table: str, size: int):
    """[low, high) ranges of ``size`` ids covering every row of ``table``, lowest first."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT min(id), max(id) FROM {table}")
        first, last = cursor.fetchone()
    if first is None:
        return
    for low in range(first, last + 1, size):
        yield low, low + size


def recompute(table: str, alias: str, column: str, priority_sql: str, live: str, now) -> int:
    """Write ``priority_sql`` (over ``table`` as ``alias``, and ``%(now)s``) to ``column`` of
    the rows that are ``live``, by id range; returns how many changed. Only rows whose value
    moves by more than a rounding error are written."""
    changed = 0
    for low, high in id_ranges(table, BATCH_IDS):
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {table} {alias} SET {column} = {priority_sql}"
                f" WHERE {alias}.id >= %(low)s AND {alias}.id < %(high)s AND {live}"
                f" AND abs({alias}.{column} - {priority_sql}) > 1e-6",
                {"now": now, "low": low, "high": high},
            )
            changed += cursor.rowcount
    return changed
