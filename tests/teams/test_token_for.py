"""`create_api_token --for USER --visibility V` (docs/visibility.md): a token that acts for a
member of the team (its sessions are theirs), with its own default visibility; without
``--for``, a team token. A user who is not a member, or a default the token could never use,
is refused with a clear error and creates nothing."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from teams.models import ApiToken, Project, Role, Team, Visibility
from tests.clients import client_for
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def create(*args: str) -> tuple[ApiToken, str, str]:
    out, err = StringIO(), StringIO()
    call_command("create_api_token", *args, stdout=out, stderr=err)
    raw = out.getvalue().strip().splitlines()[-1]
    return ApiToken.objects.get(prefix=raw[:12]), raw, err.getvalue()


def test_for_a_member_makes_a_token_acting_for_them(team, project):
    alice = MembershipFactory(team=team, role=Role.MEMBER).user
    token, raw, said = create(
        "--team", team.slug, "--project", project.slug, "--for", alice.username,
        "--visibility", "private",
    )  # fmt: skip
    assert token.person_id == alice.pk and token.default_visibility == Visibility.PRIVATE
    assert f"acting for {alice.username}" in said and "private" in said

    captured = client_for(token=raw).post(
        "/api/v1/sessions",
        {"agent_name": "dev", "messages": [{"role": "user", "content": "hi"}]},
        format="json",
    )
    assert captured.status_code == 201, captured.content
    assert captured.json()["owner"] == alice.username
    assert captured.json()["visibility"] == "private"


def test_without_for_it_is_a_team_token(team, project):
    token, _, said = create("--team", team.slug, "--project", project.slug)
    assert token.person_id is None and token.default_visibility == ""
    assert "a team token" in said and "the project's default" in said


def test_a_team_level_token_may_act_for_someone_too(team):
    bob = MembershipFactory(team=team, role=Role.ADMIN).user
    token, _, _ = create("--team", team.slug, "--team-level", "--for", bob.username)
    assert token.project_id is None and token.person_id == bob.pk


def test_owner_keeps_its_meaning_and_may_be_the_person_too(db):
    carol = UserFactory()
    token, _, _ = create(
        "--team", "fresh", "--project", "web", "--owner", carol.username, "--for", carol.username
    )
    assert token.person_id == carol.pk
    assert Team.objects.get(slug="fresh").memberships.get(user=carol).role == Role.OWNER


def test_a_non_member_is_refused_and_nothing_is_created(team, outsider):
    with pytest.raises(CommandError, match="not a member of team"):
        create("--team", team.slug, "--project", "new-one", "--for", outsider.username)
    assert not ApiToken.objects.exists()
    assert not Project.objects.filter(slug="new-one").exists()

    with pytest.raises(CommandError, match="no user named 'ghost'"):
        create("--team", "brand-new", "--project", "p", "--for", "ghost")
    assert not Team.objects.filter(slug="brand-new").exists()


def test_a_default_the_token_could_never_use_is_refused(team, project):
    with pytest.raises(CommandError, match="cannot be private"):
        create("--team", team.slug, "--project", project.slug, "--visibility", "private")
    project.allowed_visibilities = [Visibility.SUMMARY, Visibility.TEAM]
    project.save(update_fields=["allowed_visibilities"])
    member = MembershipFactory(team=team, role=Role.MEMBER).user
    with pytest.raises(CommandError, match="allows only summary, team"):
        create(
            "--team", team.slug, "--project", project.slug, "--for", member.username,
            "--visibility", "private",
        )  # fmt: skip
    assert not ApiToken.objects.exists()


def test_an_unknown_visibility_is_refused_by_the_parser(team, project):
    with pytest.raises(CommandError, match="invalid choice"):
        create("--team", team.slug, "--project", project.slug, "--visibility", "everyone")
