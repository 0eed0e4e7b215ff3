"""Who may see and do what: the one scoping path of the API, the UI and search.

A caller is either a person (a signed-in user: the projects of their teams, with their role
in each team) or an agent (a project API token: that project only, with the permissions
chosen when the token was made). Views ask for a role (``can(Role.X, team)``); a token
answers with its permissions, through ``TOKEN_PERMISSION_FOR_ROLE``, the one place the two
meet. ``Access.for_request`` builds it; ``narrowed`` limits it to one of its teams or
projects (the UI's team switcher, an explicit ``project`` parameter); ``where_can`` limits
it to the teams where it has a role (deleting in bulk, the deletion records: an admin's).
Views ask it for querysets (``scope``) and for permission (``can``); search reads its
``team_ids`` and ``project_ids`` to write the same scope in SQL.

Some rows belong to the whole team rather than to one project (a memory of team scope,
shared with every agent of the team): their model names them in ``TEAM_WIDE_ROWS`` (a
``Q``), and ``scope`` shows them from every project of the team.

Sessions, and what is derived from them, also have an owner and a visibility
(docs/visibility.md). ``scope`` applies them too, for every model that names where they are
(``VISIBILITY_PATH``: ``""`` on the row, ``"session__"`` through its session), at one of
three levels of ``Reading``: the content (messages, memories, diaries: the default), the
summary (a session's title, summary and topics), or the listing (that a session exists: the
team's admins see all of them). ``visibility_sql`` writes the same rule for search's SQL, and
``reading`` says how much of one session a caller reads.

Another team's object is simply not in the querysets, so looking it up is a 404, and so is a
teammate's session the caller may not read. A role too low for an action on a visible object
is a 403: its existence is no secret to a teammate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from django.db.models import Q
from django.utils import timezone

from teams.directories import directory_of
from teams.models import (
    ROLE_RANK,
    ApiToken,
    Membership,
    Project,
    Role,
    Team,
    TokenPermission,
    Visibility,
    hash_token,
)

# How often a token's last-used time is written (a write per request would be wasteful).
LAST_USED_RESOLUTION_SECONDS = 60

# Who an action needs, as a refusal says it ("This needs an admin of the team.").
ROLE_NEEDED = {
    Role.VIEWER: "a viewer",
    Role.MEMBER: "a member",
    Role.ADMIN: "an admin",
    Role.OWNER: "an owner",
}


# The permission a token needs where a person needs a role. Reading is a viewer's right,
# capturing and editing a member's, deleting (trash, restore, purge, removing messages,
# deletion records) an admin's. No token acts as an owner.
TOKEN_PERMISSION_FOR_ROLE = {
    Role.VIEWER: TokenPermission.READ,
    Role.MEMBER: TokenPermission.WRITE,
    Role.ADMIN: TokenPermission.DELETE,
}


def role_needed(role: str) -> str:
    """What a 403 says when ``role`` is needed and the caller's is lower."""
    return f"This needs {ROLE_NEEDED.get(role, 'a ' + role)} of the team."


def permission_needed(permission: str | None, role: str, has: tuple[str, ...]) -> str:
    """What a 403 says to a token without ``permission`` (None: no token may do it)."""
    if permission is None:
        return f"API tokens cannot do this: it needs {ROLE_NEEDED[role]} of the team, signed in."
    wanted = ",".join(p for p in TokenPermission.values if p in has or p == permission)
    return (
        f"This API token lacks the '{permission}' permission; create a token with it on the "
        f"tokens page or with create_api_token --permissions {wanted}"
    )


class Reading(StrEnum):
    """How much of a row a scope asks for (docs/visibility.md)."""

    CONTENT = "content"  # messages, memories, diary entries: team rows and the caller's own
    SUMMARY = "summary"  # a session's title, summary, topics: also 'summary' sessions
    LISTED = "listed"  # that a session exists: also every session of a team it administers


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
        .select_related("team", "project", "project__team")
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


@dataclass(frozen=True)
class Access:
    """What a caller sees: rows of ``team_ids``, and only of ``project_ids`` when that is not
    None (an agent's token, or a view narrowed to a project); with its role in each team."""

    team_ids: tuple[int, ...] = ()
    project_ids: tuple[int, ...] | None = None
    roles: Mapping[int, str] = field(default_factory=dict)  # team id → role (people)
    user: object = None
    token: ApiToken | None = None  # an agent's: its permissions stand for a role
    # The person it reads as: the signed-in user, or the person a token acts for; None for a
    # team token, which reads only what the team reads.
    person_id: int | None = None

    @classmethod
    def for_request(cls, request) -> Access:
        user = request.user
        if isinstance(user, TokenPrincipal):
            token = user.token
            return cls(
                team_ids=(token.team_id,),
                # A team-level token (no project) sees every project of its team.
                project_ids=None if token.project_id is None else (token.project_id,),
                user=user,
                token=token,
                person_id=token.person_id,
            )
        if not user.is_authenticated:
            return cls(user=user)
        roles = dict(Membership.objects.filter(user=user).values_list("team_id", "role"))
        return cls(team_ids=tuple(sorted(roles)), roles=roles, user=user, person_id=user.pk)

    @property
    def is_agent(self) -> bool:
        return self.token is not None

    def narrowed(self, *, team_id: int | None = None, project: Project | None = None) -> Access:
        """This caller limited to one of its teams and/or one of its projects. Never wider:
        a team or project it cannot see leaves it seeing nothing."""
        team_ids, project_ids = self.team_ids, self.project_ids
        if project is not None:
            seen = project_ids is None or project.pk in project_ids
            team_ids = tuple(t for t in team_ids if t == project.team_id)
            project_ids = (project.pk,) if seen else ()
        if team_id is not None:
            team_ids = tuple(t for t in team_ids if t == team_id)
        roles = {t: self.roles[t] for t in team_ids if t in self.roles}
        return replace(self, team_ids=team_ids, project_ids=project_ids, roles=roles)

    def where_can(self, role: str) -> Access:
        """This caller limited to the teams where it has ``role`` (no team when it has it
        in none); the projects it sees there are unchanged."""
        team_ids = tuple(t for t in self.team_ids if self.can(role, t))
        roles = {t: self.roles[t] for t in team_ids if t in self.roles}
        return replace(self, team_ids=team_ids, roles=roles)

    def scope(self, queryset, project_field: str = "project_id", reading=Reading.CONTENT):
        """Limit a queryset of a team-owned model to what this caller may see.
        ``project_field`` reaches a row's project (``"session__project_id"`` for a
        session's messages). The model's ``TEAM_WIDE_ROWS``, if it has them, are seen
        from any project of their team. A model with a ``VISIBILITY_PATH`` is limited to
        the rows this caller reads at ``reading``."""
        queryset = queryset.filter(team_id__in=self.team_ids)
        if self.project_ids is not None:
            in_projects = Q(**{f"{project_field}__in": self.project_ids})
            team_wide = getattr(queryset.model, "TEAM_WIDE_ROWS", None)
            seen = in_projects if team_wide is None else in_projects | team_wide
            queryset = queryset.filter(seen)
        readable = self.readable(queryset.model, reading)
        if readable is not None:
            queryset = queryset.filter(readable)
        return queryset

    def readable(self, model, reading=Reading.CONTENT) -> Q | None:
        """The rows of ``model`` this caller reads at ``reading`` (None: a model without
        visibility). Its own rows always; 'team' rows always; 'summary' rows for the
        summary and the listing, and for the content where the model says which
        (``SUMMARY_CONTENT``: a memory once accepted); every row of a team it administers
        for the listing."""
        path = getattr(model, "VISIBILITY_PATH", None)
        if path is None:
            return None
        visibility = f"{path}visibility"
        if reading == Reading.CONTENT:
            rows = Q(**{visibility: Visibility.TEAM})
            summary_content = getattr(model, "SUMMARY_CONTENT", None)
            if summary_content is not None:
                rows |= Q(**{visibility: Visibility.SUMMARY}) & summary_content
        else:
            rows = ~Q(**{visibility: Visibility.PRIVATE})
        if self.person_id is not None:
            rows |= Q(**{f"{path}owner_id": self.person_id})
        if reading == Reading.LISTED:
            administered = self.where_can(Role.ADMIN).team_ids
            if administered:
                rows |= Q(team_id__in=administered)
        return rows

    def visibility_sql(self, alias: str, reading=Reading.CONTENT) -> tuple[str, list]:
        """``readable`` for a session table aliased ``alias`` in SQL (search), with its
        params: the content or the summary."""
        if reading == Reading.CONTENT:
            rows = f"{alias}.visibility = 'team'"
        else:
            rows = f"{alias}.visibility <> 'private'"
        if self.person_id is None:
            return rows, []
        return f"({rows} OR {alias}.owner_id = %s)", [self.person_id]

    def reading(self, row) -> Reading | None:
        """How much of ``row`` (a session or memory this caller may list) it reads: all of
        it (CONTENT), its summary (SUMMARY), or only that it exists (LISTED)."""
        if row.visibility == Visibility.TEAM or (
            self.person_id is not None and row.owner_id == self.person_id
        ):
            return Reading.CONTENT
        if row.visibility == Visibility.SUMMARY:
            return Reading.SUMMARY
        return Reading.LISTED

    def owns(self, row) -> bool:
        return self.person_id is not None and row.owner_id == self.person_id

    def teams(self):
        return Team.objects.filter(pk__in=self.team_ids)

    def projects(self):
        return self.scope(Project.objects.select_related("team"), project_field="pk")

    def find_project(self, reference: str) -> Project | None:
        """One of this caller's projects by ``'team/project'``, id or working directory
        (its slug, or a path: docs/api.md); None if it sees none."""
        directory = directory_of(reference)
        if directory is not None:
            return self.projects().filter(directory=directory).order_by("team_id").first()
        if reference.isdigit():
            return self.projects().filter(pk=int(reference)).first()
        if "/" in reference:
            team_slug, _, project_slug = reference.partition("/")
            return self.projects().filter(team__slug=team_slug, slug=project_slug).first()
        return None

    def role_in(self, team_id: int) -> str | None:
        return self.roles.get(team_id)

    def token_permission(self, role: str, override: str | None = None) -> str | None:
        """What this caller's token needs where a person needs ``role``: ``override`` when
        the action says (export: a member's right, but a read), else the mapping."""
        return override or TOKEN_PERMISSION_FOR_ROLE.get(Role(role))

    def can(self, role: str, team_id: int, *, token_permission: str | None = None) -> bool:
        if self.is_agent:
            needed = self.token_permission(role, token_permission)
            return (
                team_id in self.team_ids and needed is not None and needed in self.token.permissions
            )
        mine = self.role_in(team_id)
        return mine is not None and ROLE_RANK[Role(mine)] >= ROLE_RANK[Role(role)]

    def grantable(self, team_id: int) -> list[str]:
        """The token permissions this caller may give in the team: those standing for a
        role it has (an admin may give "delete", a member only "read" and "write"), and
        "projects" for an admin (people make projects in the admin, which is theirs)."""
        given = [p for role, p in TOKEN_PERMISSION_FOR_ROLE.items() if self.can(role, team_id)]
        if not self.is_agent and self.can(Role.ADMIN, team_id):
            given.append(TokenPermission.PROJECTS)
        return given

    def refusal(self, role: str, *, token_permission: str | None = None) -> str:
        """What a 403 says when ``can`` said no."""
        if self.is_agent:
            needed = self.token_permission(role, token_permission)
            return permission_needed(needed, role, tuple(self.token.permissions))
        return role_needed(role)
