"""The session list's filters (sessions/filters.py), read from the query string."""

from __future__ import annotations

from rest_framework.filters import BaseFilterBackend

from sessions.filters import FiltersSerializer
from teams.directories import directory_of


class SessionFiltersBackend(BaseFilterBackend):
    """Narrows the list (only: a session's own URL is never filtered) by ``project`` (or the
    working-directory header) and the filters. A project the caller cannot see leaves the
    list empty. The schema declares the
    parameters on the view (``FiltersSerializer``)."""

    def filter_queryset(self, request, queryset, view):
        if view.action != "list":
            return queryset
        params = FiltersSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        reference = params.validated_data.get("project")
        if reference and directory_of(reference) is None:  # 'team/project' or an id
            project = view.access.find_project(reference)
            if project is None:
                return queryset.none()
            queryset = view.access.narrowed(project=project).scope(
                queryset, reading=view.scope_reading
            )
        else:  # a working directory, given or in the header (teams/viewsets.py)
            queryset = view.read_access(reference).scope(queryset, reading=view.scope_reading)
        return params.filters().apply(queryset, view.access)
