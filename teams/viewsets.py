"""The base every API view stands on: team scoping applied once, here, and role checks.

Subclasses declare ``base_queryset`` and never filter by team themselves; ``get_queryset``
runs it through ``Access.scope``, so another team's object is a 404.

Actions check ``self.require(Role.X, team_id)``; for an API token that asks for the
permission standing for the role (``teams.access.TOKEN_PERMISSION_FOR_ROLE``). Reads need no
role of a person beyond seeing the rows, but a token needs "read": ``initial`` checks it
before any reading view runs, so no view has to.
"""

from __future__ import annotations

from functools import cached_property

from rest_framework import exceptions, viewsets
from rest_framework.permissions import SAFE_METHODS
from rest_framework.views import APIView

from core.error_codes import ErrorCode
from teams.access import Access, Reading
from teams.directories import (
    DIRECTORY_HEADER,
    directory_of,
    header_directory,
    project_for_directory,
)
from teams.models import Project, Role, TokenPermission


class TokenPermissionMissing(exceptions.PermissionDenied):
    """403 to an API token without the permission an action needs (its own code, so an
    agent can tell it from a person's role being too low)."""

    code = ErrorCode.TOKEN_PERMISSION_MISSING


class ScopedMixin:
    #: the unscoped queryset; ``get_queryset`` scopes it
    base_queryset = None
    #: how to reach the project from a row of ``base_queryset``
    project_field = "project_id"
    #: the methods that only read (a token needs "read" for them)
    read_methods = frozenset(SAFE_METHODS)

    @cached_property
    def access(self) -> Access:
        return Access.for_request(self.request)

    @property
    def scope_reading(self) -> Reading:
        """How much of its rows this request reads (teams.access.Reading): the content,
        unless a view says less (a session's metadata for the team's admins)."""
        return Reading.CONTENT

    def get_queryset(self):
        return self.access.scope(
            self.base_queryset.all(), self.project_field, reading=self.scope_reading
        )

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)  # authenticated first: 401 before 403
        if request.method in self.read_methods and self.access.is_agent:
            self.require(Role.VIEWER, self.access.token.team_id)

    def require(self, role: str, team_id: int, *, token_permission: str | None = None) -> None:
        """403 unless the caller has ``role`` in the team (a token: the permission standing
        for it, or ``token_permission`` where the action says which)."""
        if not self.access.can(role, team_id, token_permission=token_permission):
            refusal = self.access.refusal(role, token_permission=token_permission)
            if self.access.is_agent:
                raise TokenPermissionMissing(refusal)
            raise exceptions.PermissionDenied(refusal)

    def resolve_project(self, value: str | None, *, role: str = Role.MEMBER) -> Project:
        """The project a write goes to: the one ``value`` or the working-directory header
        names (``named_project``), else the token's, or a person's only one."""
        project = self.named_project(value, role=role)
        if project is None:
            project = self.default_project(role)
        self.require(role, project.team_id)
        return project

    def read_access(self, value: str | None) -> Access:
        """The caller's access for a read (list, search, context): narrowed to the project
        ``value`` or the working-directory header names, else all it sees."""
        project = self.named_project(value, role=Role.VIEWER)
        if project is None:
            return self.access
        self.require(Role.VIEWER, project.team_id)
        return self.access.narrowed(project=project)

    def named_project(self, value: str | None, *, role: str) -> Project | None:
        """What a request names: ``value`` (an id, 'team/project', or a working directory:
        a path or its slug, docs/api.md), else the ``X-Memoryapp-Directory`` header; None when
        neither. A project token stays in its project: the header does not move it, and a
        ``value`` naming another project is refused. A team-level token with the "projects"
        permission creates the project of a new directory on a write (any ``role`` above
        viewer), never on a read."""
        value = (value or "").strip()
        token = self.access.token
        bound = token.project if token is not None and token.project_id is not None else None
        directory = directory_of(value) if value else None
        if value and directory is None:  # an id or 'team/project'
            if bound is not None:
                if value not in (str(bound.pk), f"{bound.team.slug}/{bound.slug}"):
                    raise exceptions.ValidationError(
                        {"project": f"this API token belongs to project {bound}, not {value!r}"}
                    )
                return bound
            project = self.access.find_project(value)
            if project is None:
                raise exceptions.NotFound(f"No project {value!r} (use 'team/project' or an id).")
            return project
        if bound is not None:
            if directory is None or directory == bound.directory:
                return None if directory is None else bound  # the header never moves it
            raise TokenPermissionMissing(
                f"This API token belongs to project {bound} only, not to the working "
                f"directory {directory!r}: use a team-level token (create_api_token "
                "--team-level) to work across the team's projects."
            )
        directory = directory or header_directory(self.request)
        if directory is None:
            return None
        return self.directory_project(directory, create=role != Role.VIEWER)

    def directory_project(self, directory: str, *, create: bool) -> Project:
        """The caller's project of a working directory. A write (``create``) by a
        team-level token with "projects" makes it on first use (403 naming the permission
        for a token without); a read of a directory nothing was captured from is a 404, so
        looking around (a list, a start hook's context) leaves no empty projects behind."""
        project = self.access.find_project(directory)
        if project is not None:
            return project
        token = self.access.token
        if token is None:
            raise exceptions.NotFound(
                f"No project for the working directory {directory!r} in your teams: an admin "
                "can set a project's directory in the admin, or name the project "
                "('team/project')."
            )
        if not create:
            raise exceptions.NotFound(
                f"No project for the working directory {directory!r} yet: the first session "
                "captured from it makes one. Name another project ('team/project') to read it."
            )
        allowed = TokenPermission.PROJECTS in token.permissions
        if not allowed:
            raise TokenPermissionMissing(
                f"This API token lacks the '{TokenPermission.PROJECTS}' permission, so it "
                f"cannot create a project for the new working directory {directory!r}. "
                "Name an existing project, or use a team-level token with it (tokens page, "
                "or create_api_token --team-level --permissions read,write,projects)."
            )
        return project_for_directory(token.team, directory, create=True)

    def default_project(self, role: str) -> Project:
        """Where a request naming no project goes: a project token's project, else the
        caller's only project it may act in (400 when there are several)."""
        token = self.access.token
        if token is not None and token.project_id is not None:
            return token.project
        writable = [p for p in self.access.projects() if self.access.can(role, p.team_id)]
        if len(writable) != 1:
            names = ", ".join(str(p) for p in writable[:10]) or "none"
            raise exceptions.ValidationError(
                {
                    "project": f"name the project ('team/project', or the working directory "
                    f"in the {DIRECTORY_HEADER} header); yours: {names}"
                }
            )
        return writable[0]


class ScopedViewSet(ScopedMixin, viewsets.GenericViewSet):
    pass


class ScopedAPIView(ScopedMixin, APIView):
    pass
