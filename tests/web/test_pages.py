"""Every page renders for a member of the team, and the basics of each."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.factories import MessageFactory, SessionFactory

pytestmark = pytest.mark.django_db


def test_anonymous_is_sent_to_sign_in(client):
    response = client.get("/sessions")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_sign_in_and_out(client, member):
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    assert b"Sign in" in page.content
    response = client.post(
        "/accounts/login/",
        {"username": member.username, "password": "correct horse battery staple"},
    )
    assert response.status_code == 302
    assert client.get("/").status_code == 200
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/").status_code == 302


def test_wrong_password_says_so(client, member):
    response = client.post("/accounts/login/", {"username": member.username, "password": "x"})
    assert response.status_code == 200
    assert b"correct username and password" in response.content


def test_password_change(member_client, member):
    assert member_client.get("/accounts/password/").status_code == 200
    response = member_client.post(
        "/accounts/password/",
        {
            "old_password": "correct horse battery staple",
            "new_password1": "a much longer passphrase 42",
            "new_password2": "a much longer passphrase 42",
        },
    )
    assert response.status_code == 302
    member.refresh_from_db()
    assert member.check_password("a much longer passphrase 42")


@pytest.mark.parametrize(
    "url", ["/", "/sessions", "/search", "/search?q=", "/trash", "/accounts/password/"]
)
def test_pages_render_for_a_member(member_client, team_session, url):
    response = member_client.get(url)
    assert response.status_code == 200
    assert b"memoryapp" in response.content


def test_session_list_shows_rows(member_client, team_session):
    response = member_client.get("/sessions")
    assert b"Fix the login redirect" in response.content
    assert b"architect" in response.content


def test_untitled_row_shows_first_request(member_client, project):
    session = SessionFactory(project=project, title="")
    MessageFactory(session=session, seq=0, role="system", content="You are helpful.")
    MessageFactory(session=session, seq=1, role="user", content="Please rename the module")
    assert b"Please rename the module" in member_client.get("/sessions").content


def test_session_page(member_client, team_session):
    response = member_client.get(reverse("web:session", args=[team_session.public_id]))
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="m-0"' in body and 'id="m-3"' in body
    assert "Why does login redirect?" in body
    assert '<pre class="hl">' in body  # highlighted code
    # The tool call and its result are one collapsible block.
    assert body.count('<details class="tool"') == 1
    assert "3 passed" in body
    assert "Export" in body


def test_similar_and_messages_fragments(member_client, team_session):
    similar = member_client.get(
        reverse("web:similar", args=[team_session.public_id]), HTTP_HX_REQUEST="true"
    )
    assert similar.status_code == 200
    full = member_client.get(reverse("web:similar", args=[team_session.public_id]))
    assert full.status_code == 200
    assert b"Similar sessions" in full.content


def test_unknown_session_is_404(member_client):
    assert member_client.get("/sessions/2025-01-01-nobody-abcdef").status_code == 404


def test_switcher_changes_project(member_client, team, project):
    from tests.factories import ProjectFactory

    second = ProjectFactory(team=team, name="Second")
    SessionFactory(project=second, title="In the second project")
    SessionFactory(project=project, title="In the first project")
    response = member_client.post(
        "/switch", {"project_choice": f"{team.pk}:{second.pk}", "next": "/sessions"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/sessions"
    body = member_client.get("/sessions").content
    assert b"In the second project" in body
    assert b"In the first project" not in body
    # "All projects" again.
    member_client.post("/switch", {"team": team.pk})
    body = member_client.get("/sessions").content
    assert b"In the first project" in body


def test_switch_refuses_foreign_redirects(member_client, team):
    response = member_client.post("/switch", {"team": team.pk, "next": "https://evil.example/"})
    assert response["Location"] == "/sessions"


def test_api_admin_and_health_still_answer(member_client):
    assert member_client.get("/api/v1/sessions").status_code == 200
    assert member_client.get("/admin/login/").status_code == 200
