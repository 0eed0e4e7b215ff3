"""Decay by type (docs/memories.md): the floors and special rules, and the SQL the periodic
run uses agrees with the Python formula on any memory."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st

from memories.decay import PRIORITY_SQL, RULES, priority, update_priorities
from memories.models import Memory, MemoryType
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def aged(kind, days, **flags):
    return priority(
        kind,
        base=RULES[kind].base_priority,
        days_since_access=days,
        days_since_creation=days,
        access_count=0,
        **flags,
    )


def test_types_decay_at_their_own_rates():
    assert aged(MemoryType.AGENT_STATE, 30) < aged(MemoryType.FINDING, 30)
    assert aged(MemoryType.FINDING, 30) < aged(MemoryType.DECISION, 30)


def test_floors_and_special_rules():
    assert aged(MemoryType.PREFERENCE, 1000, confidence="explicit") == pytest.approx(0.6)
    assert aged(MemoryType.PREFERENCE, 1000, confidence="inferred") == pytest.approx(0.3)
    assert aged(MemoryType.FINDING, 1000, severity="critical", resolution="open") == 0.8
    assert aged(MemoryType.FINDING, 1000, severity="critical", resolution="resolved") < 0.1
    resolved = aged(MemoryType.FINDING, 20, resolution="resolved")
    assert resolved < aged(MemoryType.FINDING, 20, resolution="open")
    assert aged(MemoryType.DECISION, 1000, impact="high") == 0.9
    assert aged(MemoryType.AGENT_STATE, 1000, pinned=True) == RULES["agent_state"].base_priority


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(MemoryType.values),
    age=st.floats(0, 2000),
    since_read=st.floats(0, 2000),
    reads=st.integers(0, 100),
    pinned=st.booleans(),
    confidence=st.sampled_from(["", "explicit", "inferred", "high"]),
    severity=st.sampled_from(["", "critical", "minor"]),
    resolution=st.sampled_from(["", "open", "resolved"]),
    impact=st.sampled_from(["", "high", "low"]),
)
def test_sql_agrees_with_python(
    kind, age, since_read, reads, pinned, confidence, severity, resolution, impact
):
    now = timezone.now()
    occurred = now - timedelta(days=age)
    accessed = occurred + timedelta(days=max(0.0, age - since_read))
    base = RULES[kind].base_priority
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {PRIORITY_SQL} FROM (SELECT %(type)s::text AS type, %(base)s::float8 AS "
            "base_priority, %(accessed)s::timestamptz AS last_accessed_at, %(occurred)s::"
            "timestamptz AS occurred_at, %(reads)s AS access_count, %(pinned)s AS pinned, "
            "%(confidence)s::text AS confidence, %(severity)s::text AS severity, "
            "%(resolution)s::text AS resolution, %(details)s::jsonb AS details) m",
            {
                "type": kind,
                "base": base,
                "accessed": accessed,
                "occurred": occurred,
                "reads": reads,
                "pinned": pinned,
                "confidence": confidence,
                "severity": severity,
                "resolution": resolution,
                "details": f'{{"implementation_impact": "{impact}"}}',
                "now": now,
            },
        )
        in_sql = cursor.fetchone()[0]
    in_python = priority(
        kind,
        base=base,
        days_since_access=(now - accessed).total_seconds() / 86400,
        days_since_creation=age,
        access_count=reads,
        pinned=pinned,
        confidence=confidence,
        severity=severity,
        resolution=resolution,
        impact=impact,
    )
    assert in_sql == pytest.approx(in_python, abs=1e-6)


def test_the_periodic_run_lowers_old_memories():
    project = ProjectFactory()
    old = Memory.objects.create(
        team=project.team,
        project=project,
        public_id="DEC-001",
        type="decision",
        content="Old decision",
        occurred_at=timezone.now() - timedelta(days=90),
        base_priority=0.95,
        priority=0.95,
        fingerprint="x",
    )
    assert update_priorities() == 1
    old.refresh_from_db()
    assert old.priority < 0.1
