"""What a team's admin may do to a teammate's private session (docs/visibility.md): list it,
see its metadata, delete it; never read it, in the Django admin or through a filter that
looks at its content."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from sessions.models import Entity, Session
from teams.models import Role
from tests.clients import client_for
from tests.factories import MembershipFactory, MessageFactory, SessionFactory, UserFactory

pytestmark = pytest.mark.django_db

SECRET = "zebracorn-ledger.py"


@pytest.fixture
def private(project):
    owner = MembershipFactory(team=project.team, role=Role.MEMBER).user
    session = SessionFactory(
        project=project,
        owner=owner,
        visibility="private",
        title="owner's afternoon",
        summary=f"Fixed {SECRET}",
        topics=["ledger"],
    )
    message = MessageFactory(session=session, content=f"the bug is in {SECRET}")
    Entity.objects.create(
        team=session.team,
        session=session,
        message=message,
        type="file",
        value=SECRET,
        normalized=SECRET,
    )
    return session


@pytest.fixture
def staff_admin(team):
    user = UserFactory(is_staff=True)
    MembershipFactory(team=team, user=user, role=Role.ADMIN)
    user.user_permissions.add(
        *Permission.objects.filter(
            codename__in=["view_session", "change_session", "view_message", "view_entity"]
        )
    )
    client = Client()
    client.force_login(user)
    return client


def test_the_django_admin_lists_the_session_but_not_its_content(staff_admin, private):
    listing = staff_admin.get("/admin/agent_sessions/session/")
    assert private.public_id in listing.content.decode()
    page = staff_admin.get(f"/admin/agent_sessions/session/{private.pk}/change/")
    assert page.status_code == 200
    assert "owner&#x27;s afternoon" in page.content.decode()
    assert SECRET not in page.content.decode()
    messages = staff_admin.get("/admin/agent_sessions/message/")
    assert SECRET not in messages.content.decode() and private.public_id not in (
        messages.content.decode()
    )
    message = private.messages.get()
    assert staff_admin.get(f"/admin/agent_sessions/message/{message.pk}/change/").status_code in (
        302,  # the admin redirects a missing object to the list, with a message
        404,
    )
    assert SECRET not in staff_admin.get("/admin/agent_sessions/entity/").content.decode()


def test_an_admin_lists_and_deletes_it_but_a_content_filter_does_not_find_it(team, private):
    admin = MembershipFactory(team=team, role=Role.ADMIN).user
    api = client_for(admin)
    listed = api.get("/api/v1/sessions").json()["results"]
    assert [s["id"] for s in listed] == [private.public_id]
    assert listed[0]["reading"] == "listed" and listed[0]["summary"] == ""
    for probe in ({"entity": SECRET}, {"topic": "ledger"}, {"role": "user"}):
        assert api.get("/api/v1/sessions", probe).json()["results"] == [], probe
        dry_run = api.post(
            "/api/v1/sessions/delete", {**probe, "dry_run": True, "reason": "probe"}, format="json"
        )
        assert dry_run.json()["sessions"] == 0, probe
    assert api.get(f"/api/v1/sessions/{private.public_id}/messages").status_code == 404
    assert api.delete(f"/api/v1/sessions/{private.public_id}").status_code == 204
    assert Session.objects.get(pk=private.pk).deleted_at is not None


def test_the_owner_finds_it_by_the_same_filters(private):
    api = client_for(private.owner)
    for probe in ({"entity": SECRET}, {"topic": "ledger"}, {"role": "user"}):
        found = api.get("/api/v1/sessions", probe).json()["results"]
        assert [s["id"] for s in found] == [private.public_id], probe


def test_a_capture_cannot_add_to_a_teammates_private_session_by_its_external_id(project):
    owner = MembershipFactory(team=project.team, role=Role.MEMBER).user
    teammate = MembershipFactory(team=project.team, role=Role.MEMBER).user
    body = {
        "project": f"{project.team.slug}/{project.slug}",
        "external_id": "run-1",
        "agent_name": "claude",
        "visibility": "private",
        "messages": [{"role": "user", "content": "mine"}],
    }
    assert client_for(owner).post("/api/v1/sessions", body, format="json").status_code == 201
    again = {**body, "messages": [*body["messages"], {"role": "user", "content": "planted"}]}
    refused = client_for(teammate).post("/api/v1/sessions", again, format="json")
    assert refused.status_code == 409 and "cannot add to" in refused.json()["detail"]
    assert "mine" not in refused.content.decode()
    session = Session.objects.get(external_id="run-1")
    assert list(session.messages.values_list("content", flat=True)) == ["mine"]
    # The owner sends it again: it is theirs to extend.
    assert client_for(owner).post("/api/v1/sessions", again, format="json").status_code == 200
    assert session.messages.count() == 2
