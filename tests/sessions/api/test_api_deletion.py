"""Deletion over REST: one message, sessions by filter (dry run first), the deletion records,
and the 409s of deleting what is already deleted — as admin, member, token and outsider."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from rest_framework.test import APIClient

from sessions.api import deletions as deletion_views
from sessions.models import DeletionRecord, Message, Session
from teams.models import ApiToken, Role
from tests.clients import client_for
from tests.factories import MembershipFactory, MessageFactory, ProjectFactory, SessionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(team):
    return MembershipFactory(team=team, role=Role.ADMIN).user


@pytest.fixture
def chat(project):
    session = SessionFactory(project=project, message_count=3, size_bytes=40)
    for seq, text in enumerate(["first question", "my card is 4111 1111", "thanks"]):
        MessageFactory(session=session, seq=seq, content=text)
    return session


@pytest.fixture
def sessions(project):
    return [
        SessionFactory(
            project=project,
            agent_name=agent,
            topics=topics,
            started_at=datetime(2025, 3, day, tzinfo=UTC),
            message_count=10,
            size_bytes=1000,
        )
        for day, agent, topics in [(1, "dev", ["auth"]), (2, "dev", ["db"]), (3, "qa", ["auth"])]
    ]


def test_removing_a_message_answers_204_then_409_with_when_and_who(admin, chat):
    url = f"/api/v1/sessions/{chat.public_id}/messages/1"
    client = client_for(admin)
    assert client.delete(url + "?reason=card number").status_code == 204
    again = client.delete(url)
    assert again.status_code == 409
    body = again.json()
    assert body["state"] == "removed" and body["removed_by"] == admin.username
    assert body["removed_at"] and "already removed" in body["detail"]

    listed = client.get(f"/api/v1/sessions/{chat.public_id}/messages").json()["results"]
    tombstone = listed[1]
    assert tombstone["content"] == "" and tombstone["removed_by"] == admin.username
    assert tombstone["removed"].startswith(f"removed by {admin.username} on ")
    assert listed[0]["removed"] is None and listed[0]["content"] == "first question"
    exported = client.get(f"/api/v1/sessions/{chat.public_id}/export?format=json").getvalue()
    assert b"4111" not in exported and b'"removed_by"' in exported
    markdown = client.get(f"/api/v1/sessions/{chat.public_id}/export?format=markdown")
    assert f"_(removed by {admin.username} on ".encode() in markdown.getvalue()


def test_removing_a_message_needs_an_admin_and_a_visible_message(admin, teammate, chat, outsider):
    url = f"/api/v1/sessions/{chat.public_id}/messages/1"
    assert client_for(teammate).delete(url).status_code == 403
    assert client_for(outsider).delete(url).status_code == 404
    missing = client_for(admin).delete(f"/api/v1/sessions/{chat.public_id}/messages/99")
    assert missing.status_code == 404 and "no message 99" in missing.json()["detail"]
    _, raw = ApiToken.issue(chat.project, name="agent")
    by_token = APIClient().delete(url, HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert by_token.status_code == 403
    assert Message.objects.get(session=chat, seq=1).removed_at is None


def test_every_already_deleted_state_is_a_409_with_the_state(admin, chat):
    client = client_for(admin)
    url = f"/api/v1/sessions/{chat.public_id}"
    purge_alive = client.delete(url + "?purge=true")
    assert purge_alive.status_code == 409 and purge_alive.json()["state"] == "alive"
    restore_alive = client.post(url + "/restore")
    assert restore_alive.status_code == 409 and restore_alive.json()["state"] == "alive"

    assert client.delete(url + "?reason=old").status_code == 204
    again = client.delete(url)
    assert again.status_code == 409
    state = again.json()
    assert state["state"] == "in_trash" and state["deleted_by"] == admin.username
    assert state["deleted_at"] and state["recovery_deadline"]
    in_trash = client.delete(url + "/messages/0")
    assert in_trash.status_code == 409 and in_trash.json()["state"] == "in_trash"
    assert DeletionRecord.objects.filter(scope="session").count() == 1


def test_delete_by_filter_counts_first_then_deletes_and_records(admin, sessions, outsider):
    client = client_for(admin)
    body = {"agent": "dev", "reason": "dev sessions of March"}
    dry = client.post("/api/v1/sessions/delete", body, format="json")
    assert dry.status_code == 200, dry.content
    assert dry.json() == {
        "dry_run": True,
        "sessions": 2,
        "messages": 20,
        "bytes": 2000,
        "already_in_trash": 0,
        "recovery_days": 30,
        "limit": deletion_views.MAX_BULK,
        "records": [],
    }
    assert Session.objects.in_trash().count() == 0 and not DeletionRecord.objects.exists()

    done = client.post("/api/v1/sessions/delete", {**body, "dry_run": False}, format="json")
    assert done.status_code == 200, done.content
    result = done.json()
    assert (result["sessions"], result["messages"], result["bytes"]) == (2, 20, 2000)
    [record] = DeletionRecord.objects.all()
    assert result["records"] == [record.pk]
    assert (record.scope, record.criteria, record.reason) == (
        "filter",
        {"agent": "dev"},
        "dev sessions of March",
    )
    assert set(Session.objects.in_trash().values_list("agent_name", flat=True)) == {"dev"}

    again = client.post("/api/v1/sessions/delete", {**body, "dry_run": False}, format="json")
    assert again.status_code == 409
    assert again.json()["state"] == "in_trash" and again.json()["already_in_trash"] == 2

    # An outsider's filter reaches nothing of this team.
    theirs = client_for(outsider).post(
        "/api/v1/sessions/delete", {"all": True, "reason": "x", "dry_run": False}, format="json"
    )
    assert theirs.status_code == 200 and theirs.json()["sessions"] == 0
    assert Session.objects.alive().count() == 1


def test_delete_by_date_range_and_topic(admin, sessions):
    body = {
        "topic": "auth",
        "started_after": "2025-03-02",
        "started_before": "2025-03-04",
        "reason": "r",
        "dry_run": False,
    }
    done = client_for(admin).post("/api/v1/sessions/delete", body, format="json")
    assert done.json()["sessions"] == 1
    assert list(Session.objects.in_trash().values_list("pk", flat=True)) == [sessions[2].pk]
    criteria = DeletionRecord.objects.get().criteria
    assert criteria["topic"] == "auth" and criteria["started_after"].startswith("2025-03-02")


def test_delete_by_filter_refuses_what_would_surprise(admin, teammate, sessions, monkeypatch):
    client = client_for(admin)
    empty = client.post("/api/v1/sessions/delete", {"reason": "r"}, format="json")
    assert empty.status_code == 400 and "all" in empty.json()
    project_only = client.post(
        "/api/v1/sessions/delete",
        {"reason": "r", "project": str(sessions[0].project_id)},
        format="json",
    )
    assert project_only.status_code == 400 and "in this project" in project_only.json()["all"][0]
    no_reason = client.post("/api/v1/sessions/delete", {"agent": "dev"}, format="json")
    assert no_reason.status_code == 400 and "reason" in no_reason.json()
    member = client_for(teammate).post(
        "/api/v1/sessions/delete", {"agent": "dev", "reason": "r"}, format="json"
    )
    assert member.status_code == 403

    monkeypatch.setattr(deletion_views, "MAX_BULK", 1)
    dry = client.post("/api/v1/sessions/delete", {"agent": "dev", "reason": "r"}, format="json")
    assert dry.status_code == 200 and dry.json()["sessions"] == 2 and dry.json()["limit"] == 1
    too_many = client.post(
        "/api/v1/sessions/delete", {"agent": "dev", "reason": "r", "dry_run": False}, format="json"
    )
    assert too_many.status_code == 400
    assert "Narrow the filters" in too_many.json()["detail"]
    assert too_many.json()["sessions"] == 2
    every = client.post(
        "/api/v1/sessions/delete", {"all": True, "reason": "r", "dry_run": False}, format="json"
    )
    assert every.status_code == 400
    assert Session.objects.in_trash().count() == 0


def test_deletions_list_is_for_admins_of_the_team_only(admin, teammate, outsider, chat, project):
    client = client_for(admin)
    client.delete(f"/api/v1/sessions/{chat.public_id}/messages/1?reason=card")
    other = SessionFactory(project=ProjectFactory(team=project.team))
    client.delete(f"/api/v1/sessions/{other.public_id}?reason=duplicate")
    listed = client.get("/api/v1/deletions")
    assert listed.status_code == 200
    rows = listed.json()["results"]
    assert [(r["scope"], r["state"], r["reason"]) for r in rows] == [
        ("session", "in_trash", "duplicate"),
        ("message", "removed", "card"),
    ]
    assert rows[1]["criteria"] == {"seq": 1} and rows[1]["recovery_deadline"] is None
    only = client.get(f"/api/v1/deletions?project={project.team.slug}/{project.slug}")
    assert [r["scope"] for r in only.json()["results"]] == ["message"]

    assert client_for(teammate).get("/api/v1/deletions").status_code == 403
    assert client_for(outsider).get("/api/v1/deletions").json()["results"] == []
    foreign = client_for(outsider).get(f"/api/v1/deletions?project={project.pk}")
    assert foreign.status_code == 404
