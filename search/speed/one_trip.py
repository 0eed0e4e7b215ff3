"""One statement with planner settings of its own, in one round trip.

A search statement that needs settings (``SET LOCAL hnsw.ef_search``, ``enable_sort``, …)
used to open a transaction for them: BEGIN, the SETs, the statement and COMMIT, four round
trips where the statement alone is one. Sent as one query string instead, the SETs and the
statement run as one implicit transaction (PostgreSQL's rule for several statements in one
simple query, which Django's client-side-binding cursor sends), so the settings hold for the
statement and end with it.

Inside a transaction (a caller's atomic block; tests) the settings would last until that
transaction ends: they are reset after the statement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.db import connection


def fetch_all(sql: str, params: Sequence, settings: Mapping[str, object]) -> list[tuple]:
    """The rows of ``sql`` run with ``settings`` (name → value, trusted text)."""
    sets = "".join(f"SET LOCAL {name} = {value}; " for name, value in settings.items())
    with connection.cursor() as cursor:
        cursor.execute(sets + sql, params)
        # The SETs' results come first; the statement's is the one with columns.
        while cursor.description is None and cursor.nextset():
            pass
        rows = cursor.fetchall()
        if settings and connection.in_atomic_block:
            cursor.execute("; ".join(f"RESET {name}" for name in settings))
    return rows
