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

from memoryapp.error_codes import ErrorCode
from teams.access import Access
from teams.models import Project, Role


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

    def get_queryset(self):
        return self.access.scope(self.base_queryset.all(), self.project_field)

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
        """The project a write goes to: the token's, or the one a person names."""
        if self.access.is_agent:
            project = self.access.token.project
            if value and value not in (str(project.pk), f"{project.team.slug}/{project.slug}"):
                raise exceptions.ValidationError(
                    {"project": f"this API token belongs to project {project}, not {value!r}"}
                )
            self.require(role, project.team_id)
            return project
        if value:
            project = self.access.find_project(value)
            if project is None:
                raise exceptions.NotFound(f"No project {value!r} (use 'team/project' or an id).")
        else:
            writable = [p for p in self.access.projects() if self.access.can(role, p.team_id)]
            if len(writable) != 1:
                names = ", ".join(str(p) for p in writable[:10]) or "none"
                raise exceptions.ValidationError(
                    {"project": f"name the project ('team/project'); yours: {names}"}
                )
            project = writable[0]
        self.require(role, project.team_id)
        return project


class ScopedViewSet(ScopedMixin, viewsets.GenericViewSet):
    pass


class ScopedAPIView(ScopedMixin, APIView):
    pass
