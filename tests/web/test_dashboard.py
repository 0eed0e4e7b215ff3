"""The dashboard: totals per project, activity per day, top entities, enrichment state and
retrying failures; scoped to the current team and project."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions.models import Entity, Message
from tests.factories import MessageFactory, ProjectFactory, SessionFactory

pytestmark = pytest.mark.django_db


def test_totals_chart_entities_and_recent(member_client, project, team_session):
    old = SessionFactory(
        project=project, title="Old one", started_at=timezone.now() - timedelta(days=3)
    )
    old.message_count, old.size_bytes = 6, 2048
    old.save(update_fields=["message_count", "size_bytes"])
    SessionFactory(project=project, title="Gone", message_count=100, deleted_at=timezone.now())
    Entity.objects.create(
        team=project.team, session=team_session, type="FILE", value="src/Auth.py",
        normalized="src/auth.py", count=3,
    )  # fmt: skip
    Entity.objects.create(
        team=project.team, session=old, type="FILE", value="src/auth.py",
        normalized="src/auth.py",
    )  # fmt: skip
    response = member_client.get("/")
    assert response.status_code == 200
    ctx = response.context
    assert ctx["totals"]["sessions"] == 2  # the deleted one is not counted …
    assert ctx["totals"]["messages"] == 10
    assert ctx["totals"]["trashed"] == 1  # … but shown as in the trash
    sessions = ctx["activity"]["sessions"]
    assert len(sessions["bars"]) == 30 and sessions["total"] == 2 and sessions["max"] == 1
    assert ctx["activity"]["messages"]["total"] == 10
    assert ctx["activity"]["messages"]["bars"][-1].value == 4  # today: the team session
    top = ctx["entities"][0]
    assert (top["normalized"], top["sessions"], top["mentions"]) == ("src/auth.py", 2, 4)
    body = response.content.decode()
    assert "<svg" in body and "Fix the login redirect" in body and "Old one" in body
    assert "entity=src/auth.py&amp;entity_type=FILE" in body


def test_project_scope_and_other_teams(member_client, project, team_session, other_team_session):
    other_project = ProjectFactory(team=project.team, name="Side")
    SessionFactory(project=other_project, title="Side work", message_count=7)
    everything = member_client.get("/").context
    assert everything["totals"]["sessions"] == 2
    assert [r["project"].name for r in everything["projects"]] == sorted([project.name, "Side"])
    member_client.post("/switch", {"project_choice": f"{project.team_id}:{other_project.pk}"})
    scoped = member_client.get("/")
    assert scoped.context["totals"]["sessions"] == 1
    assert b"Side work" in scoped.content and b"Fix the login redirect" not in scoped.content
    assert b"Secret plans" not in scoped.content


def test_enrichment_card_and_retry(admin_client, member_client, team_session, other_team_session):
    Message.objects.filter(session=team_session, seq__lt=2).update(
        enrichment_status="failed", enrichment_error="boom", enrichment_attempts=3
    )
    Message.objects.filter(session=other_team_session).update(enrichment_status="failed")
    card = admin_client.get("/dashboard/enrichment", HTTP_HX_REQUEST="true")
    assert card.context["state"]["messages"]["failed"] == 2  # not the other team's
    assert b"Retry failures now" in card.content
    assert b"<html" not in card.content  # a fragment for htmx …
    assert b"<html" in admin_client.get("/dashboard/enrichment").content  # … a page otherwise
    member_card = member_client.get("/dashboard/enrichment", HTTP_HX_REQUEST="true")
    assert b"Retry failures now" not in member_card.content
    assert member_client.post("/dashboard/retry").status_code == 403

    done = admin_client.post("/dashboard/retry", follow=True)
    assert b"Re-queued 2 messages" in done.content
    assert Message.objects.filter(session=team_session, enrichment_status="failed").count() == 0
    assert Message.objects.get(session=other_team_session).enrichment_status == "failed"
    again = admin_client.post("/dashboard/retry", follow=True)
    assert b"nothing to retry" in again.content


def test_dashboard_without_a_team_says_to_ask_an_admin(user):
    from tests.web.conftest import client_for

    response = client_for(user).get("/")
    assert response.status_code == 403
    assert b"not in a team yet" in response.content
    assert b"Ask an admin of your team to add you" in response.content


def test_dashboard_query_count_does_not_grow_with_sessions(
    member_client, project, django_assert_max_num_queries
):
    for i in range(30):
        s = SessionFactory(project=project, started_at=timezone.now() - timedelta(days=i))
        MessageFactory(session=s, seq=0)
    with django_assert_max_num_queries(15):
        member_client.get("/")
