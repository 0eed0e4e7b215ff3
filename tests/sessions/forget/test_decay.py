"""Decay priority: the SQL of the bulk updates agrees with the Python formula, and the
6-hourly update recomputes every live session by id range."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import decay_model
from sessions import decay
from sessions.models import Session
from tests.factories import SessionFactory

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def sql_priority(accessed: datetime, created: datetime, count: int) -> float:
    expression = decay.priority_sql(
        accessed="%(accessed)s::timestamptz",
        created="%(created)s::timestamptz",
        count="%(count)s",
        now="%(now)s::timestamptz",
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {expression}",
            {"accessed": accessed, "created": created, "count": count, "now": NOW},
        )
        return cursor.fetchone()[0]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    created_days=st.floats(0, 3650, allow_nan=False),
    accessed_days=st.floats(-1, 3650, allow_nan=False),
    count=st.integers(0, 2_000_000),
)
def test_sql_and_python_agree(created_days, accessed_days, count):
    created = NOW - timedelta(days=created_days)
    accessed = NOW - timedelta(days=accessed_days)  # negative: a clock a little ahead
    expected = decay.priority(accessed_days, created_days, count)
    assert sql_priority(accessed, created, count) == pytest.approx(expected, abs=1e-9)
    assert 0.0 <= expected <= 1.0


def test_update_recomputes_live_sessions_in_id_ranges(monkeypatch):
    monkeypatch.setattr(decay_model, "BATCH_IDS", 2)  # several ranges, some with gaps
    sessions = [SessionFactory() for _ in range(5)]
    trashed = sessions.pop()
    ages = {s.pk: 10 * i for i, s in enumerate(sessions)}
    for s in sessions:
        Session.objects.filter(pk=s.pk).update(
            created_at=NOW - timedelta(days=ages[s.pk] + 5),
            last_accessed_at=NOW - timedelta(days=ages[s.pk]),
            access_count=3,
            decay_priority=1.0,
        )
    Session.objects.filter(pk=trashed.pk).update(
        created_at=NOW - timedelta(days=100), deleted_at=NOW, decay_priority=1.0
    )
    changed = decay.update_priorities(NOW)
    for s in sessions:
        s.refresh_from_db()
        expected = decay.priority(ages[s.pk], ages[s.pk] + 5, 3)
        assert s.decay_priority == pytest.approx(expected)
    assert changed == len(sessions)  # all but the trashed one moved
    trashed.refresh_from_db()
    assert trashed.decay_priority == 1.0
    # A second run at the same time writes nothing.
    assert decay.update_priorities(NOW) == 0
