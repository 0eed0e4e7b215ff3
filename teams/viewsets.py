"""The base every API view stands on: team scoping applied once, here, and role checks.

Subclasses declare ``base_queryset`` and never filter by team themselves; ``get_queryset``
runs it through ``Access.scope``, so another team's object is a 404.
"""

from __future__ import annotations

from functools import cached_property

from rest_framework import exceptions, viewsets
from rest_framework.views import APIView

from teams.access import Access, role_needed
from teams.models import Project, Role


class ScopedMixin:
    #: the unscoped queryset; ``get_queryset`` scopes it
    base_queryset = None
    #: how to reach the project from a row of ``base_queryset``
    project_field = "project_id"

    @cached_property
    def access(self) -> Access:
        return Access.for_request(self.request)

    def get_queryset(self):
        return self.access.scope(self.base_queryset.all(), self.project_field)

    def require(self, role: str, team_id: int) -> None:
        if not self.access.can(role, team_id):
            raise exceptions.PermissionDenied(role_needed(role))

    def resolve_project(self, value: str | None, *, role: str = Role.MEMBER) -> Project:
        """The project a write goes to: the token's, or the one a person names."""
        if self.access.is_agent:
            project = self.access.token.project
            if value and value not in (str(project.pk), f"{project.team.slug}/{project.slug}"):
                raise exceptions.ValidationError(
                    {"project": f"this API token belongs to project {project}, not {value!r}"}
                )
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
