"""GET /api/v1/retention: the dry run of a retention policy for scripts. Admins of the team
and tokens with the delete permission get the counts; members and read/write tokens a 403;
another team's project is a 404; nothing changes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions.models import Session
from teams.models import ApiToken, Role, TokenPermission
from tests.clients import client_for
from tests.factories import MembershipFactory, ProjectFactory, SessionFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/retention"


@pytest.fixture
def four(project):
    """One session last active 60 days ago (500 bytes, 4 messages), three active today."""
    sessions = [SessionFactory(project=project, message_count=4, size_bytes=500) for _ in range(4)]
    long_ago = timezone.now() - timedelta(days=60)
    Session.objects.filter(pk=sessions[0].pk).update(
        started_at=long_ago, ended_at=long_ago, updated_at=long_ago
    )
    return sessions


def test_an_admin_gets_what_the_next_run_would_remove(team, project, four):
    admin = MembershipFactory(team=team, role=Role.ADMIN).user
    answer = client_for(admin).get(URL, {"project": str(project), "days": 30})
    assert answer.status_code == 200
    body = answer.json()
    assert body["project"] == str(project)
    assert (body["days"], body["trash_days"]) == (30, project.trash_days)
    assert (body["sessions"], body["messages"], body["bytes"]) == (1, 4, 500)
    assert (body["live_sessions"], body["percent"], body["needs_confirmation"]) == (4, 25.0, True)
    assert body["purge_sessions"] == 0 and "move 1 of 4 live sessions" in body["summary"]
    assert Session.objects.alive().count() == 4  # a dry run

    by_id = client_for(admin).get(URL, {"project": project.pk, "days": 90}).json()
    assert (by_id["sessions"], by_id["needs_confirmation"]) == (0, False)
    policy = client_for(admin).get(URL, {"project": str(project)}).json()
    assert policy["days"] is None and policy["sessions"] == 0  # the project keeps forever


def test_tokens_need_the_delete_permission(project, four):
    token, raw = ApiToken.issue(project)
    refused = client_for(token=raw).get(URL, {"days": 30})
    assert refused.status_code == 403
    assert "lacks the 'delete' permission" in refused.json()["detail"]
    ApiToken.objects.filter(pk=token.pk).update(
        permissions=[TokenPermission.READ, TokenPermission.DELETE]
    )
    answer = client_for(token=raw).get(URL, {"days": 30})
    assert answer.status_code == 200 and answer.json()["sessions"] == 1
    elsewhere = client_for(token=raw).get(URL, {"project": str(ProjectFactory()), "days": 30})
    assert elsewhere.status_code == 404


def test_members_are_refused_and_other_teams_projects_are_not_found(team, project, four):
    member = MembershipFactory(team=team, role=Role.MEMBER).user
    refused = client_for(member).get(URL, {"project": str(project), "days": 30})
    assert refused.status_code == 403 and "admin" in refused.json()["detail"]

    outsider = MembershipFactory(role=Role.OWNER).user
    hidden = client_for(outsider).get(URL, {"project": str(project), "days": 30})
    assert hidden.status_code == 404
    assert "sessions" not in hidden.json()


def test_bad_input_names_the_field(team, project):
    admin = MembershipFactory(team=team, role=Role.OWNER).user
    client = client_for(admin)
    assert "days" in client.get(URL, {"project": str(project), "days": 0}).json()
    assert "trash_days" in client.get(URL, {"project": str(project), "trash_days": "x"}).json()
    missing = client.get(URL, {"days": 3})
    assert missing.status_code == 400 and "project" in missing.json()
