"""Team and project verbs shared by management commands, the admin and the API."""

from __future__ import annotations

from django.db import transaction
from django.utils.text import slugify

from teams.models import Membership, Project, Role, Team


def ensure_team(team_slug: str) -> tuple[Team, bool]:
    """Find or create ``team_slug``; True when it was created."""
    team_slug_clean = slugify(team_slug)
    if not team_slug_clean:
        raise ValueError("the team needs at least one letter or digit")
    return Team.objects.get_or_create(slug=team_slug_clean, defaults={"name": team_slug})


@transaction.atomic
def ensure_team_and_project(
    team_slug: str, project_slug: str, *, owner=None
) -> tuple[Team, Project, bool]:
    """Find or create ``team_slug`` and its ``project_slug``; True when anything was created."""
    project_slug_clean = slugify(project_slug)
    if not slugify(team_slug) or not project_slug_clean:
        raise ValueError("team and project need at least one letter or digit")
    team, team_created = ensure_team(team_slug)
    project, project_created = Project.objects.get_or_create(
        team=team, slug=project_slug_clean, defaults={"name": project_slug}
    )
    if owner is not None:
        Membership.objects.get_or_create(team=team, user=owner, defaults={"role": Role.OWNER})
    return team, project, team_created or project_created
