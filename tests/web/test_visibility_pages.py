"""Who reads a session, in the browser UI (docs/visibility.md): the lists show every session
the caller may know exists with its owner and visibility; a session's page shows as much as
the caller reads (all; title, summary and topics; or, to an admin, only that it exists), with
the control to change who reads it for its owner (and, to make it less visible, an admin);
the list changes many at once, all or nothing; the tokens page says whom a token acts for."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from sessions.models import Session
from teams.models import ApiToken, Visibility
from tests.factories import EntityFactory, MessageFactory, SessionFactory
from tests.web.conftest import client_for

pytestmark = pytest.mark.django_db

SECRET = "the customer's card ends in 4242"


def session_of(owner, project, visibility=Visibility.TEAM, **fields):
    fields.setdefault("title", f"{visibility} session of {owner or 'the team'}")
    session = SessionFactory(project=project, owner=owner, visibility=visibility, **fields)
    MessageFactory(session=session, seq=0, role="user", content=SECRET)
    Session.objects.filter(pk=session.pk).update(message_count=1)
    return session


@pytest.fixture
def sessions(project, member, viewer):
    """The member's own private session, the viewer's summary and private ones, a team one."""
    return {
        "mine": session_of(member, project, Visibility.PRIVATE, summary="my notes"),
        "summary": session_of(
            viewer, project, Visibility.SUMMARY, summary="Fixed the redirect.", topics=["auth"]
        ),
        "private": session_of(viewer, project, Visibility.PRIVATE, summary="private notes"),
        "team": session_of(None, project, Visibility.TEAM),
    }


def page(client, session, suffix=""):
    return client.get(f"/sessions/{session.public_id}{suffix}")


# --- the list -------------------------------------------------------------------------------


def test_the_list_shows_owner_and_visibility_and_hides_a_teammate_s_private_session(
    member_client, member, sessions
):
    html = member_client.get("/sessions").content.decode()
    for name in ("mine", "summary", "team"):
        assert sessions[name].title in html, name
    assert sessions["private"].title not in html
    assert "pill-vis-private" in html and "pill-vis-summary" in html and "pill-vis-team" in html
    assert member.username in html and "the team" in html
    assert "summary only" in html  # the viewer's 'summary' session, read only so far
    assert 'formaction="/sessions/visibility"' in html  # everyone may change their own


def test_an_admin_lists_every_session_but_only_what_it_may_know_of_a_private_one(
    admin_client, project, viewer
):
    private = session_of(viewer, project, Visibility.PRIVATE, title="", topics=["salary"])
    html = admin_client.get("/sessions").content.decode()
    assert private.public_id in html and "not shared with you" in html
    assert SECRET not in html  # an untitled row shows its first request only to its readers
    assert "salary" not in html  # nor its topics


def test_a_filter_on_what_is_inside_lists_only_sessions_read_in_full(
    member_client, project, sessions
):
    for session in sessions.values():
        EntityFactory(session=session, type="FILE", value="src/pay.py", normalized="src/pay.py")
    html = member_client.get("/sessions", {"entity": "src/pay.py", "project": ""}).content.decode()
    assert sessions["mine"].title in html and sessions["team"].title in html
    assert sessions["summary"].title not in html  # would tell what its messages touched


# --- the session page -----------------------------------------------------------------------


def test_the_owner_reads_it_all_and_gets_the_control(member_client, sessions):
    html = page(member_client, sessions["mine"]).content.decode()
    assert SECRET in html and "my notes" in html
    assert 'action="/sessions/{}/visibility"'.format(sessions["mine"].public_id) in html
    for value in Visibility.values:
        assert f'<option value="{value}"' in html
    assert "csrfmiddlewaretoken" in html


def test_a_teammate_reads_a_summary_session_s_summary_not_its_messages(member_client, sessions):
    response = page(member_client, sessions["summary"])
    html = response.content.decode()
    assert response.status_code == 200
    assert "Fixed the redirect." in html and "auth" in html and sessions["summary"].title in html
    assert SECRET not in html
    assert "Its messages are not shared with you" in html
    assert "/visibility" not in html.split("Who reads it")[1].split("</section>")[0]  # no control
    assert "Export" not in html
    for suffix in ("/messages", "/export?format=markdown", "/similar"):
        assert page(member_client, sessions["summary"], suffix).status_code == 404, suffix


def test_a_teammate_s_private_session_is_404_to_a_member_and_another_team(
    member_client, outsider_client, sessions
):
    assert page(member_client, sessions["private"]).status_code == 404
    assert page(member_client, sessions["private"], "/messages").status_code == 404
    assert page(outsider_client, sessions["team"]).status_code == 404
    assert page(outsider_client, sessions["mine"]).status_code == 404


def test_an_admin_sees_a_private_session_s_metadata_and_may_delete_it(admin_client, sessions):
    private = sessions["private"]
    response = page(admin_client, private)
    html = response.content.decode()
    assert response.status_code == 200
    assert private.title in html and "This session is private to" in html
    assert SECRET not in html and "private notes" not in html
    assert f"/sessions/{private.public_id}/delete" in html
    assert "Anonymise" not in html and "Export" not in html
    assert page(admin_client, private, "/delete").status_code == 200
    assert page(admin_client, private, "/export?format=markdown").status_code == 404
    assert page(admin_client, private, "/anonymize").status_code == 404
    private.refresh_from_db()
    assert private.lifecycle == "active"  # a look by an admin is not a read


def test_an_admin_s_control_offers_only_less_visible_choices(admin_client, member, project):
    session = session_of(member, project, Visibility.SUMMARY)
    html = page(admin_client, session).content.decode()
    assert '<option value="private"' in html and '<option value="summary"' in html
    assert '<option value="team"' not in html
    assert "only its owner makes it more visible" in html


# --- changing it ----------------------------------------------------------------------------


def set_visibility(client, session, value):
    return client.post(
        f"/sessions/{session.public_id}/visibility", {"visibility": value}, follow=True
    )


def test_the_owner_changes_it_on_the_page(member_client, sessions):
    response = set_visibility(member_client, sessions["mine"], "team")
    assert "Now team: the whole team reads it." in response.content.decode()
    sessions["mine"].refresh_from_db()
    assert sessions["mine"].visibility == "team"


def test_an_admin_makes_it_less_visible_but_not_more(admin_client, member, project):
    session = session_of(member, project, Visibility.TEAM)
    made_private = set_visibility(admin_client, session, "private").content.decode()
    assert "This session is private to" in made_private  # the admin no longer reads it
    refused = set_visibility(admin_client, session, "team").content.decode()
    assert "Visibility not changed" in refused and "less visible, not more" in refused
    session.refresh_from_db()
    assert session.visibility == "private"


def test_a_member_cannot_change_a_teammate_s_session(member_client, sessions):
    refused = set_visibility(member_client, sessions["summary"], "team").content.decode()
    assert "only the session&#x27;s owner changes its visibility" in refused
    assert set_visibility(member_client, sessions["private"], "team").status_code == 404
    sessions["summary"].refresh_from_db()
    assert sessions["summary"].visibility == "summary"


def test_the_control_needs_post_and_csrf(member, sessions):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(member)
    url = f"/sessions/{sessions['mine'].public_id}/visibility"
    assert strict.post(url, {"visibility": "team"}).status_code == 403
    assert client_for(member).get(url).status_code == 405
    sessions["mine"].refresh_from_db()
    assert sessions["mine"].visibility == "private"


def test_bulk_changes_the_ticked_sessions(member_client, member, project):
    a, b = session_of(member, project), session_of(member, project, Visibility.PRIVATE)
    response = member_client.post(
        "/sessions/visibility",
        {"session": [a.public_id, b.public_id], "visibility": "private", "next": "/sessions"},
        follow=True,
    )
    said = response.content.decode()
    assert "1 session is now private: only their owners read them. 1 already was." in said
    a.refresh_from_db()
    assert a.visibility == "private"


def test_bulk_is_all_or_nothing(member_client, member, sessions):
    mine, theirs = sessions["mine"], sessions["summary"]
    refused = member_client.post(
        "/sessions/visibility",
        {"session": [mine.public_id, theirs.public_id], "visibility": "team"},
        follow=True,
    ).content.decode()
    assert "Visibility not changed, for any of them" in refused
    unlisted = member_client.post(
        "/sessions/visibility",
        {"session": [mine.public_id, sessions["private"].public_id], "visibility": "team"},
        follow=True,
    ).content.decode()
    assert "no longer in your list" in unlisted
    mine.refresh_from_db()
    assert mine.visibility == "private"
    nothing = member_client.post("/sessions/visibility", {"visibility": "team"}, follow=True)
    assert "Tick the sessions to change first." in nothing.content.decode()


def test_an_admin_deletes_and_restores_a_private_session_from_the_lists(
    admin_client, sessions, admin
):
    private = sessions["private"]
    confirm = admin_client.post(
        "/sessions/bulk-delete", {"session": [private.public_id], "selection": "1"}
    )
    assert confirm.status_code == 200 and private.title in confirm.content.decode()
    Session.objects.filter(pk=private.pk).update(deleted_at=timezone.now(), deleted_by=admin)
    trash = admin_client.get("/trash").content.decode()
    assert private.title in trash and "pill-vis-private" in trash
    restored = admin_client.post("/trash/restore", {"session": [private.public_id]}, follow=True)
    assert "Restored 1 session" in restored.content.decode()


def test_the_trash_lists_a_teammate_s_private_session_only_to_admins(
    member_client, admin_client, sessions
):
    Session.objects.filter(pk=sessions["private"].pk).update(deleted_at=timezone.now())
    assert sessions["private"].title not in member_client.get("/trash").content.decode()
    assert sessions["private"].title in admin_client.get("/trash").content.decode()


# --- tokens ---------------------------------------------------------------------------------


def test_the_tokens_page_makes_tokens_for_their_maker_or_for_the_team(admin_client, admin, project):
    form = admin_client.get("/tokens").content.decode()
    assert f"Me ({admin.username})" in form and "Nobody: a team token" in form
    mine = admin_client.post(
        "/tokens",
        {
            "project": project.pk,
            "name": "mine",
            "permissions": ["read", "write"],
            "acts_for": "me",
            "default_visibility": "private",
        },
    )
    assert mine.status_code == 200 and f"Acts for {admin.username}" in mine.content.decode()
    token = ApiToken.objects.get(name="mine")
    assert token.person == admin and token.default_visibility == "private"

    refused = admin_client.post(
        "/tokens",
        {
            "project": project.pk,
            "name": "ci",
            "permissions": ["read"],
            "acts_for": "team",
            "default_visibility": "private",
        },
    )
    assert "cannot be private" in refused.content.decode()
    assert not ApiToken.objects.filter(name="ci").exists()

    team = admin_client.post(
        "/tokens",
        {"project": project.pk, "name": "ci", "permissions": ["read"], "acts_for": "team"},
    )
    assert "A team token (acts for nobody)" in team.content.decode()
    assert ApiToken.objects.get(name="ci").person is None
    listed = admin_client.get("/tokens").content.decode()
    assert "Acts for" in listed and "project&#x27;s default" in listed
