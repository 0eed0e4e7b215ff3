"""The dashboard's lifecycle and retention cards: live sessions per lifecycle state, and what
the next retention run removes from each project in view; never another team's numbers."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions.models import Lifecycle, Session
from teams.models import Project
from tests.factories import ProjectFactory, SessionFactory, TeamFactory

pytestmark = pytest.mark.django_db


def long_idle(project, **fields):
    """A session of ``project`` last active 100 days ago."""
    session = SessionFactory(project=project, **fields)
    then = timezone.now() - timedelta(days=100)
    Session.objects.filter(pk=session.pk).update(started_at=then, ended_at=then, updated_at=then)
    return session


@pytest.fixture
def other_team_retention(db):
    """Another team's project with a retention and sessions past it."""
    foreign = ProjectFactory(team=TeamFactory(), name="Foreign secrets", retention_days=1)
    for _ in range(5):
        long_idle(foreign, message_count=50, lifecycle=Lifecycle.ARCHIVED)
    return foreign


def test_lifecycle_states_count_live_sessions_of_the_team(
    member_client, project, other_team_retention
):
    for state, n in [("active", 2), ("idle", 1), ("decaying", 3)]:
        for _ in range(n):
            SessionFactory(project=project, lifecycle=state)
    SessionFactory(project=project, lifecycle="idle", deleted_at=timezone.now())  # in the trash
    response = member_client.get("/")
    counts = {row["state"].value: row["count"] for row in response.context["lifecycle"]}
    assert counts == {"active": 2, "idle": 1, "decaying": 3, "archived": 0}
    body = response.content.decode()
    assert "Lifecycle" in body and "<dt>Decaying</dt><dd>3</dd>" in body


def test_next_retention_run_per_project_and_nothing_of_other_teams(
    member_client, project, other_team_retention
):
    project.retention_days = 30
    project.save()
    forever = ProjectFactory(team=project.team, name="Forever")
    long_idle(forever)
    long_idle(project, message_count=6, size_bytes=4096)
    SessionFactory(project=project)  # active today

    response = member_client.get("/")
    retention = response.context["retention"]
    [row] = retention["plans"]
    assert row["project"] == project
    assert (row["plan"].sessions, row["plan"].messages, row["plan"].bytes) == (1, 6, 4096)
    assert row["plan"].at == retention["at"] and retention["at"] > timezone.now()
    assert [p.name for p in retention["kept"]] == ["Forever"]
    body = response.content.decode()
    assert "Next retention run" in body and "50.0 % of 2" in body
    assert f"{retention['at']:%b} {retention['at'].day}, {retention['at']:%H:%M} UTC" in body
    assert "Forever keeps sessions until they are deleted" in body
    # The other team's 250 messages would be a cell of the card (a bare "250" can be a
    # username's digits: factories number their users).
    assert "Foreign secrets" not in body
    assert '<td class="num">250</td>' not in body
    assert '<td class="num">6</td>' in body  # the same cell, this team's


def test_without_any_retention_the_card_says_sessions_are_kept(member_client, project):
    body = member_client.get("/").content.decode()
    assert "No project has a retention period" in body


def test_an_outsider_sees_only_their_own_teams_numbers(outsider, outsider_client, project):
    project.retention_days = 1
    project.save()
    long_idle(project, message_count=77)
    theirs = Project.objects.get(team__memberships__user=outsider)
    theirs.retention_days = 5
    theirs.save()
    response = outsider_client.get("/")
    assert response.status_code == 200
    assert [row["project"] for row in response.context["retention"]["plans"]] == [theirs]
    assert response.context["retention"]["plans"][0]["plan"].sessions == 0
    assert project.name not in response.content.decode()
