"""How long a session in the trash stays restorable: calendar days to its deadline (the day
of deletion with 30-day retention says 30), hours in its last 24 hours."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from sessions.forget.lifecycle import soft_delete
from sessions.models import Session
from web.templatetags.web import time_left_text

NOW = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("deadline", "expected"),
    [
        (NOW + timedelta(days=30), "30 days left"),
        (NOW + timedelta(days=30, seconds=-1), "30 days left"),
        (NOW + timedelta(days=29, hours=13, minutes=59), "29 days left"),  # 23:59 that day
        (NOW + timedelta(days=29, hours=14), "30 days left"),  # 00:00 the day after
        (NOW + timedelta(days=2), "2 days left"),
        (NOW + timedelta(days=1, seconds=1), "1 day left"),
        (NOW + timedelta(days=1), "1 day left"),
        (NOW + timedelta(days=1, seconds=-1), "24 hours left"),
        (NOW + timedelta(hours=13, minutes=30), "14 hours left"),  # 23:30 the same day
        (NOW + timedelta(hours=1, seconds=1), "2 hours left"),
        (NOW + timedelta(hours=1), "1 hour left"),
        (NOW + timedelta(minutes=59), "less than an hour left"),
        (NOW + timedelta(seconds=1), "less than an hour left"),
        (NOW, "to be purged within the hour"),
        (NOW - timedelta(minutes=30), "to be purged within the hour"),
    ],
)
def test_time_left_at_the_boundaries(deadline, expected):
    assert time_left_text(deadline, NOW) == expected


def test_hours_when_under_a_day_even_across_midnight():
    late = datetime(2026, 3, 4, 23, 0, tzinfo=UTC)
    assert time_left_text(late + timedelta(hours=2), late) == "2 hours left"
    early = datetime(2026, 3, 4, 0, 30, tzinfo=UTC)
    assert time_left_text(early + timedelta(hours=46), early) == "1 day left"


@pytest.mark.django_db
def test_deleted_today_with_30_day_retention_says_30_days(admin_client, team_session):
    assert team_session.project.trash_days == 30
    soft_delete(team_session)
    trash = admin_client.get("/trash").content.decode()
    assert "30 days left" in trash and "29 days" not in trash
    page = admin_client.get(reverse("web:session", args=[team_session.public_id]))
    assert "(30 days left)" in page.content.decode()


@pytest.mark.django_db
def test_the_last_day_counts_hours(admin_client, team_session):
    soft_delete(team_session)
    Session.objects.filter(pk=team_session.pk).update(
        deleted_at=timezone.now() - timedelta(days=29, hours=12)
    )
    trash = admin_client.get("/trash").content.decode()
    assert "12 hours left" in trash
