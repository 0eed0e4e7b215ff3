"""API token permissions (read / write / delete): every permission set against an endpoint of
each kind, the refusals' messages and codes, isolation, people's roles unchanged, and how
tokens get their permissions (create_api_token, the tokens page)."""

from __future__ import annotations

import re
from io import StringIO
from types import SimpleNamespace

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from sessions.forget.lifecycle import soft_delete
from sessions.models import Session
from teams.access import Access, TokenPrincipal
from teams.models import ApiToken, Role
from tests.factories import MembershipFactory, ProjectFactory
from tests.search.corpus import capture
from web.forms import TokenForm

pytestmark = pytest.mark.django_db

READ, WRITE, DELETE = "read", "write", "delete"
PERMISSION_SETS = [
    (READ,),
    (WRITE,),
    (DELETE,),
    (READ, WRITE),
    (READ, WRITE, DELETE),
]


TOKEN_TALK = [
    ("user", "How should we store the auth tokens?"),
    ("assistant", "Hash them with SHA-256; show them once."),
]


def stored_session(project, title="Token storage") -> Session:
    return capture(project, TOKEN_TALK, title=title)


def token_client(project, permissions) -> APIClient:
    _, raw = ApiToken.issue(project, permissions=list(permissions))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


CAPTURE = {"agent_name": "dev", "messages": [{"role": "user", "content": "deploy the api"}]}
EVENT = (
    b'{"ts": 1704067200, "source": "chat", "session_id": "chat:1", "person_id": "p", '
    b'"char_id": "c", "sender": "user", "text": "hello"}\n'
)

# (method, path, body, content type, the success status); {id} is a live session, {trashed}
# one in the trash.
CALLS = {
    READ: [
        ("get", "/api/v1/sessions", None, None, 200),
        ("get", "/api/v1/sessions/{id}", None, None, 200),
        ("get", "/api/v1/sessions/{id}/messages", None, None, 200),
        ("get", "/api/v1/sessions/{id}/export?format=markdown", None, None, 200),
        ("get", "/api/v1/sessions/{id}/resume", None, None, 200),
        ("get", "/api/v1/search?q=tokens&mode=keyword", None, None, 200),
        ("post", "/api/v1/search", {"q": "tokens", "mode": "keyword"}, "json", 200),
        ("post", "/api/v1/context", {"query": "auth tokens"}, "json", 200),
        ("get", "/api/v1/entities", None, None, 200),
        ("get", "/api/v1/pipeline", None, None, 200),
    ],
    WRITE: [
        ("post", "/api/v1/sessions", CAPTURE, "json", 201),
        (
            "post",
            "/api/v1/sessions/{id}/messages",
            {"role": "user", "content": "more"},
            "json",
            201,
        ),
        ("patch", "/api/v1/sessions/{id}", {"title": "Renamed"}, "json", 200),
        ("post", "/api/v1/events", EVENT, "application/x-ndjson", 201),
        (
            "post",
            "/api/v1/import?format=plain_text",
            b"User: hi\nAssistant: hello",
            "text/plain",
            201,
        ),
    ],
    DELETE: [
        ("delete", "/api/v1/sessions/{id}?reason=agent+cleanup", None, None, 204),
        ("post", "/api/v1/sessions/{trashed}/restore", None, None, 200),
        ("delete", "/api/v1/sessions/{trashed}?purge=true", None, None, 204),
    ],
}
CASES = [
    pytest.param(kind, call, permissions, id=f"{'+'.join(permissions)}-{call[0]}-{call[1]}")
    for kind, calls in CALLS.items()
    for call in calls
    for permissions in PERMISSION_SETS
]


def send(client, call, **ids):
    method, path, body, content_type, _ = call
    url = path.format(**ids)
    if body is None:
        return getattr(client, method)(url)
    if content_type == "json":
        return getattr(client, method)(url, body, format="json")
    return getattr(client, method)(url, body, content_type=content_type)


@pytest.mark.parametrize("kind, call, permissions", CASES)
def test_each_permission_allows_its_kind_of_endpoint_and_nothing_else(kind, call, permissions):
    project = ProjectFactory()
    live = stored_session(project)
    trashed = soft_delete(stored_session(project, "Old"), by=None, reason="test")
    client = token_client(project, permissions)
    response = send(client, call, id=live.public_id, trashed=trashed.public_id)
    if kind in permissions:
        assert response.status_code == call[4], response.content[:300]
    else:
        assert response.status_code == 403, response.content[:300]
        body = response.json()
        assert body["code"] == "MEM_E112"
        assert f"lacks the '{kind}' permission" in body["detail"]
        assert (
            "tokens page" in body["detail"] and "create_api_token --permissions" in body["detail"]
        )
    # A refused write or delete changed nothing.
    if kind != READ and kind not in permissions:
        live.refresh_from_db()
        assert live.deleted_at is None and live.title == "Token storage"
        assert Session.objects.filter(pk=trashed.pk, deleted_at__isnull=False).exists()
        assert Session.objects.filter(project=project).count() == 2


def test_the_refusal_names_the_permissions_a_new_token_needs():
    project = ProjectFactory()
    live = stored_session(project)
    body = token_client(project, (READ, WRITE)).delete(f"/api/v1/sessions/{live.public_id}").json()
    assert body == {
        "detail": "This API token lacks the 'delete' permission; create a token with it on the "
        "tokens page or with create_api_token --permissions read,write,delete",
        "code": "MEM_E112",
    }


def test_a_write_only_capture_token_still_gets_its_capture_answer():
    project = ProjectFactory()
    client = token_client(project, (WRITE,))
    created = client.post("/api/v1/sessions", {**CAPTURE, "external_id": "run-1"}, format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["agent_name"] == "dev" and body["messages_added"] == 1
    again = client.post("/api/v1/sessions", {**CAPTURE, "external_id": "run-1"}, format="json")
    assert again.status_code == 200 and again.json()["id"] == body["id"]
    appended = client.post(
        f"/api/v1/sessions/{body['id']}/messages", {"role": "user", "content": "2"}, format="json"
    )
    assert appended.status_code == 201 and appended.json()["messages_added"] == 1
    # … but cannot read it back.
    assert client.get(f"/api/v1/sessions/{body['id']}").status_code == 403


def test_an_agent_with_delete_deletes_a_session_as_delete_session_does():
    project = ProjectFactory()
    live = stored_session(project)
    client = token_client(project, (READ, WRITE, DELETE))
    assert client.delete(f"/api/v1/sessions/{live.public_id}").status_code == 204
    live.refresh_from_db()
    assert live.deleted_at is not None
    again = client.delete(f"/api/v1/sessions/{live.public_id}")
    assert again.status_code == 409 and again.json()["code"] == "MEM_E130"


def test_permissions_never_reach_past_the_tokens_project():
    project = ProjectFactory()
    sibling = stored_session(ProjectFactory(team=project.team), "Sibling's")
    theirs = stored_session(ProjectFactory(), "Another team's")
    client = token_client(project, (READ, WRITE, DELETE))
    for session in (sibling, theirs):
        for response in (
            client.get(f"/api/v1/sessions/{session.public_id}"),
            client.delete(f"/api/v1/sessions/{session.public_id}"),
            client.patch(f"/api/v1/sessions/{session.public_id}", {"title": "x"}, format="json"),
        ):
            assert response.status_code == 404
            assert response.json()["code"] == "MEM_E005"
        session.refresh_from_db()
        assert session.deleted_at is None and session.title != "x"
    assert client.get("/api/v1/sessions").json()["results"] == []


def test_no_token_acts_as_an_owner():
    project = ProjectFactory()
    token, _ = ApiToken.issue(project, permissions=[READ, WRITE, DELETE])
    access = Access.for_request(SimpleNamespace(user=TokenPrincipal(token)))
    assert access.can(Role.ADMIN, project.team_id)
    assert not access.can(Role.OWNER, project.team_id)
    assert "API tokens cannot do this" in access.refusal(Role.OWNER)
    assert access.roles == {}  # a token has permissions, not a role


@pytest.mark.parametrize(
    "role, allowed",
    [(Role.VIEWER, (200, 403, 403)), (Role.MEMBER, (200, 200, 403)), (Role.ADMIN, (200, 200, 204))],
)
def test_peoples_rights_still_come_from_their_role(team, project, role, allowed):
    person = MembershipFactory(team=team, role=role).user
    live = stored_session(project)
    client = APIClient()
    client.force_authenticate(person)
    url = f"/api/v1/sessions/{live.public_id}"
    got = (
        client.get(url).status_code,
        client.patch(url, {"title": "Renamed"}, format="json").status_code,
        client.delete(url).status_code,
    )
    assert got == allowed
    refused = client.delete(url) if role != Role.ADMIN else None
    if refused is not None:
        assert refused.json() == {"detail": "This needs an admin of the team.", "code": "MEM_E111"}


# --- create_api_token ----------------------------------------------------------------------


def create_token(*args) -> ApiToken:
    call_command("create_api_token", "--team", "acme", "--project", "web", *args,
                 stdout=StringIO(), stderr=StringIO())  # fmt: skip
    return ApiToken.objects.latest("created_at")


def test_create_api_token_sets_the_permissions_it_is_given():
    assert create_token().permissions == [READ, WRITE]
    assert create_token("--permissions", "delete,READ, write").permissions == [READ, WRITE, DELETE]
    assert create_token("--permissions", "read").permissions == [READ]


@pytest.mark.parametrize(
    "value, says",
    [("read,admin", "unknown permission(s) admin"), ("", "at least one"), (" , ", "at least one")],
)
def test_create_api_token_refuses_wrong_permissions_and_creates_nothing(value, says):
    with pytest.raises(CommandError, match="--permissions: .*" + re.escape(says)):
        create_token("--permissions", value)
    assert not ApiToken.objects.exists()


def test_create_api_token_help_explains_the_permissions(capsys):
    with pytest.raises(SystemExit):
        call_command("create_api_token", "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert "--permissions" in text and "default: read,write" in text
    assert "Delete (trash, restore, purge" in text


# --- the tokens page -------------------------------------------------------------------------


def page_client(team, role) -> Client:
    client = Client()
    client.force_login(MembershipFactory(team=team, role=role).user)
    return client


def test_an_admin_chooses_the_permissions_and_the_list_shows_them(team, project):
    client = page_client(team, Role.ADMIN)
    page = client.get("/tokens").content.decode()
    assert 'name="permissions" value="delete"' in page
    # read and write are ticked to begin with; delete is offered, not ticked.
    assert re.search(r'value="read"[^>]*checked', page)
    assert re.search(r'value="write"[^>]*checked', page)
    assert not re.search(r'value="delete"[^>]*checked', page)
    response = client.post(
        "/tokens", {"project": project.pk, "name": "cleaner", "permissions": [READ, DELETE]}
    )
    assert response.status_code == 200
    token = ApiToken.objects.get(name="cleaner")
    assert token.permissions == [READ, DELETE]
    page = response.content.decode()
    assert "Permissions: read, delete." in page
    assert '<span class="pill pill-error">delete</span>' in page


def test_a_token_needs_at_least_one_permission(team, project):
    response = page_client(team, Role.ADMIN).post(
        "/tokens", {"project": project.pk, "name": "none"}
    )
    assert "Choose at least one permission." in response.content.decode()
    assert not ApiToken.objects.exists()


def test_a_member_cannot_create_a_token_let_alone_grant_delete(team, project):
    response = page_client(team, Role.MEMBER).post(
        "/tokens", {"project": project.pk, "name": "sneaky", "permissions": [READ, DELETE]}
    )
    assert response.status_code == 403
    assert not ApiToken.objects.exists()


def test_the_form_refuses_a_permission_the_person_may_not_grant(project):
    data = {"project": project.pk, "permissions": [READ, DELETE]}
    form = TokenForm(data, projects=[project], grantable=[READ, WRITE])
    assert not form.is_valid()
    assert form.errors["permissions"] == [
        "Only an admin of the team can give a token the 'delete' permission."
    ]
    assert TokenForm(data, projects=[project], grantable=[READ, WRITE, DELETE]).is_valid()


@pytest.mark.parametrize(
    "role, grantable",
    [
        (Role.VIEWER, [READ]),
        (Role.MEMBER, [READ, WRITE]),
        (Role.ADMIN, [READ, WRITE, DELETE, "projects"]),
        (Role.OWNER, [READ, WRITE, DELETE, "projects"]),
    ],
)
def test_a_person_may_grant_what_their_role_allows(team, role, grantable):
    person = MembershipFactory(team=team, role=role).user
    assert Access.for_request(SimpleNamespace(user=person)).grantable(team.pk) == grantable
