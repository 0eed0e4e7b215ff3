"""The session list: the shared filters (sessions/filters.py), a sort, keyset pagination.

It lists what the caller may know exists (``Reading.LISTED``, docs/visibility.md): the
team's sessions, teammates' 'summary' ones, their own, and for an admin every session of the
team, each with its owner and visibility; what a row shows of it follows what the caller
reads of it. A filter on what is inside sessions (who spoke, an entity) lists only sessions
the caller reads in full, so that it never tells what a session it may not read contains."""

from __future__ import annotations

from django.db.models import OuterRef, Subquery
from django.db.models.functions import Left
from django.shortcuts import render

from sessions.models import Message, MessageRole, Session
from teams.access import Reading
from teams.models import Role
from web.forms import SessionListForm
from web.pagination import DEFAULT_SORT, BadCursor, paginate
from web.scope import Workspace, team_required
from web.views.visibility import CHOICES as VISIBILITY_CHOICES

LIST_COLUMNS = (
    "public_id", "title", "agent_name", "agent_persona", "workflow", "status", "lifecycle",
    "started_at", "ended_at", "message_count", "size_bytes", "topics", "source_format",
    "deleted_at", "project_id", "team_id", "project__name", "project__slug",
    "project__session_quota_bytes", "project__quota_warn_percent",
    "owner_id", "visibility", "owner__username",
)  # fmt: skip


def first_request():
    """The start of a session's first user message (for rows without a title)."""
    first = (
        Message.objects.filter(session=OuterRef("pk"), role=MessageRole.USER)
        .order_by("seq")
        .annotate(head=Left("content", 240))
        .values("head")[:1]
    )
    return Subquery(first)


def with_workspace_project(request, workspace) -> dict:
    """The query, with the switcher's project when the form did not say (first visit)."""
    data = request.GET.copy()
    if "project" not in data and workspace.project is not None:
        data["project"] = str(workspace.project.pk)
    return data


def filtered_sessions(request, workspace):
    """The list's form and its filtered queryset (of the current team, narrowed to the
    project asked for; any deletion state), or None while the form has errors. Shared by
    the list and bulk delete, so both see the same sessions."""
    form = SessionListForm(with_workspace_project(request, workspace), projects=workspace.projects)
    if not form.is_valid():
        return form, None
    access = workspace.narrowed(form.cleaned_data.get("project"))
    listed = access.scope(Session.objects.all(), reading=Reading.LISTED)
    # A filter on what is inside (an entity, a speaker, a topic) reaches only the sessions
    # the caller reads that far (sessions.filters.Filters.reading_needed).
    return form, form.filters.apply(listed, access)


def with_readings(rows: list, access) -> list:
    """Each row with how much of it the caller reads (``reading``), for the template."""
    for row in rows:
        row.reading = str(access.reading(row))
    return rows


@team_required
def session_list(request):
    workspace = Workspace.of(request)
    form, queryset = filtered_sessions(request, workspace)
    page, errors = None, []
    sort = (
        form.cleaned_data.get("sort") if hasattr(form, "cleaned_data") else None
    ) or DEFAULT_SORT
    if queryset is not None:
        rows = (
            queryset.alive()
            .select_related("project", "owner")
            .only(*LIST_COLUMNS)
            .annotate(first_request=first_request())
        )
        try:
            page = paginate(rows, sort, request.GET.get("cursor"))
        except BadCursor as exc:
            errors.append(str(exc))
            page = paginate(rows, sort, None)
        with_readings(page.rows, workspace.access)
    return render(
        request,
        "web/sessions/list.html",
        {
            "form": form,
            "page": page,
            "errors": errors,
            "sort": sort,
            "can_delete": workspace.can(Role.ADMIN),
            "visibilities": VISIBILITY_CHOICES,
        },
    )
