"""Entity counts, as the dashboard and the API's entity list both give them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from sessions.entity_stats import entity_counts
from sessions.models import Entity
from tests.factories import SessionFactory

pytestmark = pytest.mark.django_db


def entity(session, value, *, normalized=None, type="FILE", count=1):
    return Entity.objects.create(
        team_id=session.team_id,
        session=session,
        type=type,
        value=value,
        normalized=normalized or value.lower(),
        count=count,
    )


def greatest(*values: str) -> str:
    """The greatest of ``values`` in the database's collation."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT max(v) FROM unnest(%s::text[]) AS v(v)", [list(values)])
        return cursor.fetchone()[0]


def test_sessions_mentions_spelling_and_last_seen(project):
    now = timezone.now()
    old = SessionFactory(project=project, started_at=now - timedelta(days=3))
    new = SessionFactory(project=project, started_at=now - timedelta(days=1))
    entity(old, "src/Auth.py", normalized="src/auth.py", count=3)
    entity(new, "src/auth.py", count=2)
    [row] = entity_counts(Entity.objects.all(), 10)
    assert row == {
        "type": "FILE",
        "normalized": "src/auth.py",
        "value": greatest("src/Auth.py", "src/auth.py"),
        "sessions": 2,
        "mentions": 5,
        "last_seen": new.started_at,
    }


def test_most_widespread_first_then_most_mentioned_then_by_name(project):
    a, b, c = (SessionFactory(project=project) for _ in range(3))
    for session in (a, b, c):
        entity(session, "Makefile")
    entity(a, "zeta.py", count=9)
    entity(b, "zeta.py")
    entity(a, "alpha.py", count=9)
    entity(b, "alpha.py")
    entity(a, "pytest", type="COMMAND", count=10)
    entity(a, "beta.py", count=10)  # the same counts as pytest
    rows = entity_counts(Entity.objects.all(), 10)
    assert [(r["type"], r["normalized"]) for r in rows] == [
        ("FILE", "makefile"),  # 3 sessions
        ("FILE", "alpha.py"),  # 2 sessions, 10 mentions: by name
        ("FILE", "zeta.py"),
        ("COMMAND", "pytest"),  # 1 session, 10 mentions: by type, then name
        ("FILE", "beta.py"),
    ]
    assert len(entity_counts(Entity.objects.all(), 2)) == 2


def test_counts_only_the_rows_given(project):
    kept, dropped = SessionFactory(project=project), SessionFactory(project=project)
    entity(kept, "README.md")
    entity(dropped, "README.md", count=7)
    [row] = entity_counts(Entity.objects.filter(session=kept), 10)
    assert (row["sessions"], row["mentions"]) == (1, 1)
