"""Who may see and do what: the one scoping path shared by the API and the UI.

A caller is either a person (a signed-in user: the projects of their teams, with their role
in each team) or an agent (a project API token: that project only, with the rights of a
member). ``Access.for_request`` builds it; views ask it for querysets and for permission.

Another team's object is simply not in the querysets, so looking it up is a 404. A role too
low for an action on a visible object is a 403: its existence is no secret to a teammate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils import timezone

from teams.models import ROLE_RANK, ApiToken, Membership, Project, Role, hash_token

# How often a token's last-used time is written (a write per request would be wasteful).
LAST_USED_RESOLUTION_SECONDS = 60


class TokenPrincipal:
    """``request.user`` for an agent authenticated by a project API token."""

    is_authenticated = True
    is_active = True
    is_anonymous = False
    is_staff = False
    is_superuser = False
    pk = None

    def __init__(self, token: ApiToken):
        self.token = token

    def __str__(self) -> str:
        return f"token {self.token.prefix}…"

    def get_username(self) -> str:
        return str(self)


def find_active_token(raw: str) -> ApiToken | None:
    token = (
        ApiToken.objects.active()
        .select_related("project", "project__team")
        .filter(token_hash=hash_token(raw))
        .first()
    )
    if token is None:
        return None
    now = timezone.now()
    if (
        token.last_used_at is None
        or (now - token.last_used_at).total_seconds() > LAST_USED_RESOLUTION_SECONDS
    ):
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


@dataclass
class Access:
    user: object
    token: ApiToken | None = None
    roles: dict[int, str] = field(default_factory=dict)  # team id → role

    @classmethod
    def for_request(cls, request) -> Access:
        user = request.user
        if isinstance(user, TokenPrincipal):
            return cls(user=user, token=user.token)
        if not user.is_authenticated:
            return cls(user=user)
        roles = dict(Membership.objects.filter(user=user).values_list("team_id", "role"))
        return cls(user=user, roles=roles)

    @property
    def is_agent(self) -> bool:
        return self.token is not None

    def team_ids(self) -> list[int]:
        if self.token is not None:
            return [self.token.team_id]
        return list(self.roles)

    def projects(self):
        if self.token is not None:
            return Project.objects.filter(pk=self.token.project_id).select_related("team")
        return Project.objects.filter(team_id__in=self.team_ids()).select_related("team")

    def scope(self, queryset, project_field: str = "project_id"):
        """Limit a queryset of a team-owned model to what this caller may see."""
        if self.token is not None:
            return queryset.filter(
                team_id=self.token.team_id, **{project_field: self.token.project_id}
            )
        return queryset.filter(team_id__in=self.team_ids())

    def role_in(self, team_id: int) -> str | None:
        if self.token is not None:
            return Role.MEMBER if team_id == self.token.team_id else None
        return self.roles.get(team_id)

    def can(self, role: str, team_id: int) -> bool:
        mine = self.role_in(team_id)
        return mine is not None and ROLE_RANK[Role(mine)] >= ROLE_RANK[Role(role)]
