"""The UI's view of who is asking: ``teams.access.Access`` plus the team and project the
person picked in the header switcher (kept in their Django session).

Everything a page lists goes through ``Access.scope`` narrowed to the current team (and to
a project, when one is picked or asked for): ``team_access``, ``project_access``,
``narrowed``. Single objects are looked up through the whole ``access``, so a link to a
teammate's session in another of your teams works, and another team's object is a 404.

Sessions are also read at a ``Reading`` (docs/visibility.md): the lists and a session's page
at ``LISTED`` (a teammate's 'summary' session shows its title and summary, an admin sees that
a private one exists), what shows or changes its messages at ``CONTENT`` (the default), so a
session the caller may not read that far is a 404 there too.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import render

from sessions.models import Session
from teams.access import Access, Reading, role_needed
from teams.models import Project, Team

SESSION_TEAM_KEY = "web_team_id"
SESSION_PROJECT_KEY = "web_project_id"


def team_required(view):
    """Signed in and a member of a team. Every page works on the current team, so a person
    in none gets the page that says how to join one (403), whatever the URL or method."""

    @login_required
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if Workspace.of(request).team is None:
            return render(request, "web/no_team.html", status=403)
        return view(request, *args, **kwargs)

    return wrapped


@dataclass
class Workspace:
    request: object
    access: Access

    @classmethod
    def of(cls, request) -> Workspace:
        cached = getattr(request, "_web_workspace", None)
        if cached is None:
            cached = cls(request=request, access=Access.for_request(request))
            request._web_workspace = cached
        return cached

    @cached_property
    def teams(self) -> list[Team]:
        return list(self.access.teams().order_by("name"))

    @cached_property
    def team(self) -> Team | None:
        wanted = self.request.session.get(SESSION_TEAM_KEY)
        for team in self.teams:
            if team.pk == wanted:
                return team
        return self.teams[0] if self.teams else None

    @cached_property
    def projects(self) -> list[Project]:
        """Projects of the current team."""
        if self.team is None:
            return []
        return list(self.team_access.projects().order_by("name"))

    @cached_property
    def project(self) -> Project | None:
        wanted = self.request.session.get(SESSION_PROJECT_KEY)
        return next((p for p in self.projects if p.pk == wanted), None)

    @property
    def role(self) -> str | None:
        return self.access.role_in(self.team.pk) if self.team else None

    def can(self, role: str, team_id: int | None = None) -> bool:
        if team_id is None:
            team_id = self.team.pk if self.team is not None else None
        return team_id is not None and self.access.can(role, team_id)

    def require(self, role: str, team_id: int | None = None) -> None:
        """A visible object, a role too low: 403 (as the API does)."""
        if not self.can(role, team_id):
            raise PermissionDenied(role_needed(role))

    def switch(self, team_id: int | None, project_id: int | None) -> None:
        session = self.request.session
        if team_id in {t.pk for t in self.teams}:
            session[SESSION_TEAM_KEY] = team_id
            for name in ("team", "team_access", "projects"):
                self.__dict__.pop(name, None)
        self.__dict__.pop("project", None)
        valid = {p.pk for p in self.projects}
        session[SESSION_PROJECT_KEY] = project_id if project_id in valid else None

    # --- scoping ---------------------------------------------------------------------------

    @cached_property
    def team_access(self) -> Access:
        """The caller's access narrowed to the current team (nothing without one)."""
        if self.team is None:
            return Access(user=self.access.user)
        return self.access.narrowed(team_id=self.team.pk)

    def narrowed(self, project_id: int | None) -> Access:
        """The current team, narrowed to its project ``project_id`` when that names one."""
        project = next((p for p in self.projects if p.pk == project_id), None)
        if project is None:
            return self.team_access
        return self.team_access.narrowed(project=project)

    @property
    def project_access(self) -> Access:
        """The current team, narrowed to the project picked in the switcher, if any."""
        return self.narrowed(self.project.pk if self.project is not None else None)

    def sessions(self, reading: Reading = Reading.CONTENT):
        """Sessions of the current team (any deletion state) read at ``reading``."""
        return self.team_access.scope(Session.objects.all(), reading=reading)

    def session_or_404(
        self, public_id: str, *, alive: bool | None = None, reading: Reading = Reading.CONTENT
    ) -> Session:
        """One session of any of the caller's teams it reads at ``reading``, or 404
        (another team's, a teammate's it may not read that far, or none)."""
        queryset = self.access.scope(
            Session.objects.select_related("project", "project__team", "owner"), reading=reading
        )
        if alive is True:
            queryset = queryset.alive()
        elif alive is False:
            queryset = queryset.in_trash()
        session = queryset.filter(public_id=public_id).first()
        if session is None:
            raise Http404("No such session.")
        return session
