"""Teams, roles, scoping, API tokens and the commands that make them."""

from io import StringIO
from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.core.management import CommandError, call_command
from django.test import Client

from sessions.models import Session
from teams.access import Access, TokenPrincipal
from teams.models import ApiToken, Membership, Project, Role, Team, hash_token
from tests.factories import MembershipFactory, ProjectFactory, SessionFactory

pytestmark = pytest.mark.django_db


def test_roles_include_the_roles_below_them():
    viewer = MembershipFactory(role=Role.VIEWER)
    admin = MembershipFactory(role=Role.ADMIN)
    assert viewer.allows(Role.VIEWER) and not viewer.allows(Role.MEMBER)
    assert admin.allows(Role.MEMBER) and admin.allows(Role.ADMIN) and not admin.allows(Role.OWNER)


def access_of(user) -> Access:
    return Access.for_request(SimpleNamespace(user=user))


def test_scoping_returns_only_the_users_teams(team, project, teammate, outsider):
    mine = SessionFactory(project=project)
    SessionFactory()  # another team's
    assert list(access_of(teammate).scope(Session.objects.all())) == [mine]
    assert mine not in access_of(outsider).scope(Session.objects.all())
    assert list(access_of(teammate).teams()) == [team]
    assert project not in access_of(outsider).projects()
    assert list(access_of(teammate).projects()) == [project]
    assert not access_of(AnonymousUser()).scope(Session.objects.all()).exists()


def test_a_token_sees_its_project_only(team, project):
    ours = SessionFactory(project=project)
    SessionFactory(project=ProjectFactory(team=team))  # a sibling project of the same team
    token, _ = ApiToken.issue(project)
    access = access_of(TokenPrincipal(token))
    assert list(access.scope(Session.objects.all())) == [ours]
    assert list(access.projects()) == [project]
    assert access.can(Role.MEMBER, team.pk) and not access.can(Role.ADMIN, team.pk)


def test_narrowing_never_widens(team, project, teammate, outsider):
    mine = SessionFactory(project=project)
    sibling = SessionFactory(project=ProjectFactory(team=team))
    theirs = SessionFactory()
    access = access_of(teammate)
    assert list(access.narrowed(project=project).scope(Session.objects.all())) == [mine]
    assert set(access.narrowed(team_id=team.pk).scope(Session.objects.all())) == {mine, sibling}
    # Another team's project or team: nothing at all, not that team's rows.
    elsewhere = [access.narrowed(project=theirs.project), access.narrowed(team_id=theirs.team_id)]
    for narrowed in elsewhere:
        assert not narrowed.scope(Session.objects.all()).exists()
        assert narrowed.team_ids == () and not narrowed.can(Role.VIEWER, theirs.team_id)
    token, _ = ApiToken.issue(project)
    agent = access_of(TokenPrincipal(token))
    assert not agent.narrowed(project=sibling.project).scope(Session.objects.all()).exists()


def test_a_project_is_found_by_reference_only_among_the_callers(project, teammate, outsider):
    reference = f"{project.team.slug}/{project.slug}"
    assert access_of(teammate).find_project(reference) == project
    assert access_of(teammate).find_project(str(project.pk)) == project
    assert access_of(outsider).find_project(reference) is None
    assert access_of(outsider).find_project(str(project.pk)) is None
    assert access_of(teammate).find_project(project.slug) is None  # neither form


def test_token_is_stored_hashed_with_a_visible_prefix(project):
    token, raw = ApiToken.issue(project, name="ci")
    assert raw.startswith("mem_") and len(raw) > 40
    assert token.prefix == raw[:12]
    assert token.token_hash == hash_token(raw)
    assert raw not in {token.token_hash, token.prefix, token.name}
    assert token.team == project.team
    found = ApiToken.objects.active().get(token_hash=hash_token(raw))
    assert found == token


def test_revoking_is_once_and_hides_the_token(project):
    token, raw = ApiToken.issue(project)
    assert token.revoke() is True
    assert token.revoked_at is not None and not token.is_active
    assert token.revoke() is False
    assert not ApiToken.objects.active().filter(token_hash=hash_token(raw)).exists()


def test_create_api_token_prints_the_token_alone_on_the_last_line():
    out, err = StringIO(), StringIO()
    call_command(
        "create_api_token",
        "--team",
        "Acme",
        "--project",
        "Web App",
        "--name",
        "bot",
        stdout=out,
        stderr=err,
    )
    raw = out.getvalue().strip().splitlines()[-1]
    token = ApiToken.objects.get(token_hash=hash_token(raw))
    assert token.project.slug == "web-app" and token.project.team.slug == "acme"
    assert token.name == "bot"
    assert "Created acme/web-app" in err.getvalue()
    # Again: same team and project, a second token.
    call_command(
        "create_api_token", "--team", "acme", "--project", "web-app", stdout=out, stderr=err
    )
    assert Project.objects.filter(slug="web-app").count() == 1
    assert ApiToken.objects.filter(project=token.project).count() == 2


def make_token(*args) -> tuple[str, str]:
    """Run create_api_token; its token (the last line of stdout) and what it said on stderr."""
    out, err = StringIO(), StringIO()
    call_command("create_api_token", *args, stdout=out, stderr=err)
    return out.getvalue().strip().splitlines()[-1], err.getvalue()


def test_create_api_token_makes_the_first_admin_owner_of_a_new_team_so_the_ui_shows_it():
    """The README's first steps: an admin from `make run`, a token for a new team, a session
    captured with it, and the admin's browser lists that session."""
    admin = get_user_model().objects.create_superuser("admin", password="pw-for-the-test-1")
    raw, said = make_token("--team", "acme", "--project", "web")
    assert Membership.objects.get(team__slug="acme", user=admin).role == Role.OWNER
    assert "Added 'admin' to team acme as its owner" in said
    agent = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    captured = agent.post(
        "/api/v1/sessions",
        {
            "agent_name": "claude",
            "title": "Pick a database",
            "messages": [{"role": "user", "content": "PostgreSQL or MongoDB for billing?"}],
        },
        content_type="application/json",
    )
    assert captured.status_code == 201
    person = Client()
    person.force_login(admin)
    listed = person.get("/sessions")
    assert listed.status_code == 200
    assert "Pick a database" in listed.content.decode()


def test_create_api_token_leaves_a_team_that_has_members_as_it_is(team, owner):
    get_user_model().objects.create_superuser("admin", password="pw-for-the-test-1")
    _, said = make_token("--team", team.slug, "--project", "web")
    assert list(Membership.objects.filter(team=team).values_list("user", flat=True)) == [owner.pk]
    assert "Added" not in said


def test_create_api_token_adds_the_owner_it_is_given(team, owner):
    named = get_user_model().objects.create_user("bob", password="pw-for-the-test-1")
    make_token("--team", team.slug, "--project", "web", "--owner", "bob")
    assert Membership.objects.get(team=team, user=named).role == Role.OWNER
    # Someone already in the team keeps their role.
    teammate = MembershipFactory(team=team, role=Role.VIEWER).user
    make_token("--team", team.slug, "--project", "web", "--owner", teammate.username)
    assert Membership.objects.get(team=team, user=teammate).role == Role.VIEWER


def test_create_api_token_refuses_an_unknown_owner_and_creates_nothing():
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        make_token("--team", "acme", "--project", "web", "--owner", "nobody")
    assert not Team.objects.filter(slug="acme").exists()
    assert not ApiToken.objects.exists()


def test_create_api_token_says_how_to_add_people_when_there_is_no_admin_yet():
    raw, said = make_token("--team", "acme", "--project", "web")
    assert ApiToken.objects.get(token_hash=hash_token(raw)).project.team.slug == "acme"
    assert not Membership.objects.filter(team__slug="acme").exists()
    assert "has no members" in said and "/admin/" in said


def test_create_api_token_refuses_an_empty_slug():
    with pytest.raises(CommandError, match="at least one letter"):
        call_command("create_api_token", "--team", "!!!", "--project", "x", stdout=StringIO())


def test_bootstrap_generates_prints_and_saves_a_password_once(tmp_path, monkeypatch, settings):
    settings.VAR_DIR = tmp_path
    monkeypatch.delenv("MEMORYAPP_ADMIN_PASSWORD", raising=False)
    out = StringIO()
    call_command("bootstrap", stdout=out)
    saved = (tmp_path / "initial-admin-password").read_text().strip()
    assert saved in out.getvalue()
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.check_password(saved)
    assert Membership.objects.get(user=admin).role == Role.OWNER
    assert Project.objects.filter(team__slug="demo", slug="demo").exists()

    again = StringIO()
    call_command("bootstrap", stdout=again)
    assert saved not in again.getvalue()
    assert "initial-admin-password" in again.getvalue()
    assert get_user_model().objects.count() == 1


def test_bootstrap_never_prints_a_password_it_did_not_generate(tmp_path, monkeypatch, settings):
    settings.VAR_DIR = tmp_path
    monkeypatch.setenv("MEMORYAPP_ADMIN_PASSWORD", "given-by-the-operator-42")
    out = StringIO()
    call_command("bootstrap", stdout=out)
    assert "given-by-the-operator-42" not in out.getvalue()
    assert not (tmp_path / "initial-admin-password").exists()
    assert get_user_model().objects.get(username="admin").check_password("given-by-the-operator-42")
