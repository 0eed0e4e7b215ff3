"""Teams, roles, scoping, API tokens and the commands that make them."""

from io import StringIO
from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.core.management import CommandError, call_command

from sessions.models import Session
from teams.access import Access, TokenPrincipal
from teams.models import ApiToken, Membership, Project, Role, hash_token
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


def test_create_api_token_refuses_an_empty_slug():
    with pytest.raises(CommandError, match="at least one letter"):
        call_command("create_api_token", "--team", "!!!", "--project", "x", stdout=StringIO())


def test_bootstrap_generates_prints_and_saves_a_password_once(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORYAPP_VAR_DIR", str(tmp_path))
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


def test_bootstrap_never_prints_a_password_it_did_not_generate(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORYAPP_VAR_DIR", str(tmp_path))
    monkeypatch.setenv("MEMORYAPP_ADMIN_PASSWORD", "given-by-the-operator-42")
    out = StringIO()
    call_command("bootstrap", stdout=out)
    assert "given-by-the-operator-42" not in out.getvalue()
    assert not (tmp_path / "initial-admin-password").exists()
    assert get_user_model().objects.get(username="admin").check_password("given-by-the-operator-42")
