"""Who reads a session, over REST (docs/visibility.md): what a capture gets (a person's
token, a team token, the token's and the project's defaults), who may change it afterwards
(PATCH /sessions/{id} and POST /sessions/visibility, both through
``sessions.visibility.change``), and bad input: a JSON 4xx naming ``visibility``, with
nothing changed."""

from __future__ import annotations

import json

import pytest

from sessions.models import Session
from teams.models import ApiToken, Role, TokenPermission, Visibility
from tests.clients import client_for
from tests.factories import EntityFactory, MembershipFactory, SessionFactory

pytestmark = pytest.mark.django_db

BULK = "/api/v1/sessions/visibility"


@pytest.fixture
def member(team):
    return MembershipFactory(team=team, role=Role.MEMBER).user


@pytest.fixture
def admin(team):
    return MembershipFactory(team=team, role=Role.ADMIN).user


@pytest.fixture
def viewer(team):
    return MembershipFactory(team=team, role=Role.VIEWER).user


def token_client(project, *, person=None, default_visibility="", permissions=None):
    _, raw = ApiToken.issue(
        project, person=person, default_visibility=default_visibility, permissions=permissions
    )
    return client_for(token=raw)


def capture(client, **payload):
    payload.setdefault("agent_name", "architect")
    payload.setdefault("messages", [{"role": "user", "content": "hello"}])
    return client.post("/api/v1/sessions", payload, format="json")


def names_visibility(response) -> bool:
    return "visibility" in response.json()


def session_of(owner, project, visibility=Visibility.TEAM, **fields):
    return SessionFactory(project=project, owner=owner, visibility=visibility, **fields)


# --- capture -----------------------------------------------------------------------------


def test_a_person_token_captures_sessions_of_its_person(project, member):
    client = token_client(project, person=member)
    default = capture(client)
    assert default.status_code == 201, default.content
    assert default.json()["owner"] == member.username
    assert default.json()["visibility"] == "team"  # the project's default
    assert default.json()["reading"] == "content"

    private = capture(client, visibility="private")
    assert private.status_code == 201, private.content
    assert private.json()["visibility"] == "private"
    row = Session.objects.get(public_id=private.json()["id"])
    assert (row.owner_id, row.visibility) == (member.pk, "private")


def test_the_token_default_comes_before_the_project_default(project, member):
    project.default_visibility = Visibility.SUMMARY
    project.save(update_fields=["default_visibility"])
    client = token_client(project, person=member, default_visibility=Visibility.PRIVATE)
    assert capture(client).json()["visibility"] == "private"
    assert capture(client, visibility="team").json()["visibility"] == "team"  # asked wins


def test_a_team_token_captures_team_sessions_and_cannot_ask_for_private(project):
    client = token_client(project)
    body = capture(client).json()
    assert body["owner"] is None and body["visibility"] == "team"

    refused = capture(client, visibility="private", external_id="x-1")
    assert refused.status_code == 400 and names_visibility(refused)
    assert not Session.objects.filter(external_id="x-1").exists()


def test_a_private_project_default_makes_a_team_token_s_sessions_summary(project):
    project.default_visibility = Visibility.PRIVATE
    project.save(update_fields=["default_visibility"])
    body = capture(token_client(project)).json()
    assert body["owner"] is None and body["visibility"] == "summary"


def test_unknown_and_forbidden_visibilities_are_400_and_capture_nothing(project, member):
    project.allowed_visibilities = [Visibility.PRIVATE, Visibility.SUMMARY]
    project.default_visibility = Visibility.PRIVATE
    project.save(update_fields=["allowed_visibilities", "default_visibility"])
    client = token_client(project, person=member)

    unknown = capture(client, visibility="everyone", external_id="x-2")
    assert unknown.status_code == 400 and names_visibility(unknown)
    forbidden = capture(client, visibility="team", external_id="x-3")
    assert forbidden.status_code == 400 and names_visibility(forbidden)
    assert "does not allow" in forbidden.json()["visibility"][0]
    assert not Session.objects.filter(external_id__in=["x-2", "x-3"]).exists()


# --- PATCH /sessions/{id} -----------------------------------------------------------------


def patch(user, session, value):
    return client_for(user).patch(
        f"/api/v1/sessions/{session.public_id}", {"visibility": value}, format="json"
    )


def test_the_owner_changes_the_visibility_both_ways(project, member):
    session = session_of(member, project)
    assert patch(member, session, "private").json()["visibility"] == "private"
    assert patch(member, session, "team").json()["visibility"] == "team"
    session.refresh_from_db()
    assert session.visibility == "team"


def test_an_admin_makes_a_teammate_s_session_less_visible_not_more(project, member, admin):
    session = session_of(member, project)
    less = patch(admin, session, "summary")
    assert less.status_code == 200, less.content
    assert less.json()["reading"] == "summary"  # the admin now reads only its summary

    more = patch(admin, session, "team")
    assert more.status_code == 403 and names_visibility(more)
    session.refresh_from_db()
    assert session.visibility == "summary"


def test_a_member_or_viewer_does_not_change_someone_else_s_session(project, member, viewer):
    session = session_of(None, project, Visibility.SUMMARY)
    by_member = patch(member, session, "team")
    assert by_member.status_code == 403 and names_visibility(by_member)
    assert patch(viewer, session, "team").status_code == 403
    session.refresh_from_db()
    assert session.visibility == "summary"


def test_a_teammate_s_private_session_is_404_to_a_member(project, member, teammate):
    session = session_of(teammate, project, Visibility.PRIVATE)
    assert patch(member, session, "team").status_code == 404
    assert client_for(member).get(f"/api/v1/sessions/{session.public_id}").status_code == 404


# --- POST /sessions/visibility ------------------------------------------------------------


def bulk(client, ids, value):
    return client.post(BULK, {"ids": ids, "visibility": value}, format="json")


def test_bulk_changes_the_owner_s_sessions_and_says_which(project, member):
    a, b = session_of(member, project), session_of(member, project, Visibility.PRIVATE)
    response = bulk(client_for(member), [a.public_id, b.public_id], "private")
    assert response.status_code == 200, response.content
    assert response.json() == {
        "visibility": "private",
        "changed": [a.public_id],
        "unchanged": [b.public_id],
    }
    a.refresh_from_db()
    assert a.visibility == "private"


def test_bulk_is_all_or_nothing(project, member, teammate):
    mine = session_of(member, project)
    theirs = session_of(teammate, project, Visibility.SUMMARY)
    response = bulk(client_for(member), [mine.public_id, theirs.public_id], "team")
    assert response.status_code == 403 and names_visibility(response)
    mine.refresh_from_db()
    assert mine.visibility == "team"  # unchanged: its neighbour was refused
    theirs.refresh_from_db()
    assert theirs.visibility == "summary"


def test_bulk_404s_an_id_the_caller_cannot_list_and_changes_nothing(project, member, teammate):
    mine = session_of(member, project)
    private = session_of(teammate, project, Visibility.PRIVATE)
    response = bulk(client_for(member), [mine.public_id, private.public_id, "nope"], "private")
    assert response.status_code == 404
    assert private.public_id in response.json()["detail"] and "nope" in response.json()["detail"]
    mine.refresh_from_db()
    assert mine.visibility == "team"


def test_bulk_by_an_admin_lists_private_sessions_and_makes_things_less_visible(
    project, member, admin
):
    private = session_of(member, project, Visibility.PRIVATE)
    shared = session_of(member, project)
    less = bulk(client_for(admin), [private.public_id, shared.public_id], "private")
    assert less.status_code == 200, less.content
    assert less.json()["changed"] == [shared.public_id]
    more = bulk(client_for(admin), [private.public_id], "team")
    assert more.status_code == 403 and names_visibility(more)


def test_bulk_bad_input_is_400_naming_the_field(project, member):
    session = session_of(member, project)
    client = client_for(member)
    unknown = bulk(client, [session.public_id], "everyone")
    assert unknown.status_code == 400 and names_visibility(unknown)
    empty = bulk(client, [], "private")
    assert empty.status_code == 400 and "ids" in empty.json()

    project.allowed_visibilities = [Visibility.SUMMARY, Visibility.TEAM]
    project.save(update_fields=["allowed_visibilities"])
    forbidden = bulk(client, [session.public_id], "private")
    assert forbidden.status_code == 400 and names_visibility(forbidden)

    team_owned = session_of(None, project)
    admin = MembershipFactory(team=project.team, role=Role.ADMIN).user
    project.allowed_visibilities = list(Visibility.values)
    project.save(update_fields=["allowed_visibilities"])
    no_owner = bulk(client_for(admin), [team_owned.public_id], "private")
    assert no_owner.status_code == 400 and names_visibility(no_owner)
    assert Session.objects.filter(visibility="team").count() == 2  # nothing changed


def test_bulk_by_tokens(project, member):
    session = session_of(member, project)
    reader = token_client(project, person=member, permissions=[TokenPermission.READ])
    assert bulk(reader, [session.public_id], "private").status_code == 403
    team_token = token_client(project)
    refused = bulk(team_token, [session.public_id], "private")
    assert refused.status_code == 403 and names_visibility(refused)
    writer = token_client(project, person=member)
    assert bulk(writer, [session.public_id], "private").status_code == 200
    session.refresh_from_db()
    assert session.visibility == "private"


def test_another_team_s_session_is_404(project, member, outsider):
    session = session_of(member, project)
    assert bulk(client_for(outsider), [session.public_id], "private").status_code == 404


def test_the_schema_describes_the_bulk_endpoint(project, member):
    response = client_for(member).get("/api/schema/", HTTP_ACCEPT="application/json")
    schema = json.loads(response.content)
    operation = schema["paths"]["/api/v1/sessions/visibility"]["post"]
    assert set(operation["responses"]) >= {"200", "400", "403", "404"}
    body = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    name = body.rsplit("/", 1)[-1]
    properties = schema["components"]["schemas"][name]["properties"]
    assert set(properties) == {"ids", "visibility"}


def test_the_list_shows_what_each_may_know_and_filters_on_content_only_what_it_reads(
    project, member, admin, teammate
):
    mine = session_of(member, project, Visibility.PRIVATE)
    summary = session_of(teammate, project, Visibility.SUMMARY, summary="about pay")
    private = session_of(teammate, project, Visibility.PRIVATE, summary="salary")
    for session in (mine, summary, private):
        EntityFactory(session=session, type="FILE", value="pay.py", normalized="pay.py")

    def listed(user, **params):
        body = client_for(user).get("/api/v1/sessions", params).json()
        return {s["id"]: s for s in body["results"]}

    as_member = listed(member)
    assert set(as_member) == {mine.public_id, summary.public_id}
    assert as_member[summary.public_id]["reading"] == "summary"
    assert as_member[summary.public_id]["summary"] == "about pay"
    as_admin = listed(admin)
    assert as_admin[private.public_id]["reading"] == "listed"
    assert as_admin[private.public_id]["summary"] == ""
    # A filter on what is inside: only the sessions the caller reads in full answer it.
    assert set(listed(member, entity="pay.py")) == {mine.public_id}
    assert set(listed(admin, entity="pay.py")) == set()
