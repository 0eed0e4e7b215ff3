"""Roles as in the API (viewers read, members export, admins delete/restore/purge and manage
tokens), and another team's anything is a 404, even by guessing ids."""

from __future__ import annotations

import pytest
from django.urls import reverse

from teams.models import ApiToken

pytestmark = pytest.mark.django_db


def url(name, session):
    return reverse(f"web:{name}", args=[session.public_id])


def test_viewer_reads_but_cannot_export_or_delete(viewer_client, team_session):
    page = viewer_client.get(url("session", team_session))
    assert page.status_code == 200
    assert b"Export" not in page.content and b"Delete" not in page.content
    assert viewer_client.get(url("export", team_session)).status_code == 403
    assert viewer_client.get(url("delete", team_session)).status_code == 403
    assert viewer_client.post(url("delete", team_session)).status_code == 403
    assert viewer_client.get("/tokens").status_code == 403


def test_member_exports_but_cannot_delete(member_client, team_session):
    page = member_client.get(url("session", team_session))
    assert b"Export" in page.content and b"Delete" not in page.content
    assert member_client.get(url("export", team_session)).status_code == 200
    assert member_client.post(url("delete", team_session)).status_code == 403
    assert member_client.post(url("restore", team_session)).status_code == 403
    assert member_client.post(url("purge", team_session)).status_code == 403
    assert member_client.get("/tokens").status_code == 403
    team_session.refresh_from_db()
    assert team_session.deleted_at is None


def test_admin_may_delete_and_manage_tokens(admin_client, team_session):
    page = admin_client.get(url("session", team_session))
    assert b"Delete" in page.content
    assert admin_client.get(url("delete", team_session)).status_code == 200
    assert admin_client.get("/tokens").status_code == 200
    assert b"API tokens" in admin_client.get("/").content


def test_403_page_is_friendly(viewer_client, team_session):
    response = viewer_client.get(url("export", team_session))
    assert b"Not allowed" in response.content
    assert b"This needs a member of the team." in response.content


@pytest.mark.parametrize("name", ["session", "messages", "similar", "export", "delete", "purge"])
def test_other_teams_session_is_404(outsider_client, team_session, name):
    assert outsider_client.get(url(name, team_session)).status_code == 404


@pytest.mark.parametrize("name", ["delete", "restore", "purge"])
def test_other_teams_session_is_404_on_post(admin_client, other_team_session, name):
    assert admin_client.post(url(name, other_team_session)).status_code == 404
    other_team_session.refresh_from_db()
    assert other_team_session.deleted_at is None


def test_other_teams_sessions_are_in_no_list_search_or_trash(
    outsider_client, team_session, admin_client, other_team_session
):
    for path in ("/", "/sessions", "/trash", "/search?entity=x"):
        body = outsider_client.get(path).content
        assert b"Fix the login redirect" not in body
    from sessions.forget.lifecycle import soft_delete

    soft_delete(other_team_session)
    for path in ("/", "/sessions", "/trash"):
        assert b"Secret plans" not in admin_client.get(path).content
    assert admin_client.get(url("session", other_team_session)).status_code == 404


def test_other_teams_token_is_404(admin_client, other_team_session):
    token, _ = ApiToken.issue(other_team_session.project, name="theirs")
    response = admin_client.post(reverse("web:token-revoke", args=[token.pk]))
    assert response.status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None
    assert b"theirs" not in admin_client.get("/tokens").content


def test_switching_to_a_team_you_are_not_in_is_ignored(member_client, other_team_session, team):
    member_client.post("/switch", {"team": other_team_session.team_id})
    body = member_client.get("/sessions").content
    assert b"Secret plans" not in body
    assert team.name.encode() in body
