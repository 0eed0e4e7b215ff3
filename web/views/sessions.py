"""The session list: the API's ``SessionFilter``, a sort, keyset pagination."""

from __future__ import annotations

from django.db.models import OuterRef, Subquery
from django.db.models.functions import Left
from django.shortcuts import render

from sessions.api.filters import SessionFilter
from sessions.models import Message
from sessions.models import Role as MessageRole
from teams.models import Role
from web.forms import SessionListForm
from web.pagination import DEFAULT_SORT, BadCursor, paginate
from web.scope import Workspace, team_required

LIST_COLUMNS = (
    "public_id", "title", "agent_name", "agent_persona", "workflow", "status", "lifecycle",
    "started_at", "ended_at", "message_count", "size_bytes", "topics", "source_format",
    "deleted_at", "project_id", "team_id", "project__name", "project__slug",
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


def filter_params(form: SessionListForm) -> dict[str, str]:
    """The form's clean values as ``SessionFilter`` parameters."""
    data = form.cleaned_data
    params = {}
    for name in ("agent", "workflow", "status", "lifecycle", "source_format", "topic"):
        if data.get(name):
            params[name] = data[name]
    if data.get("project"):
        params["project"] = str(data["project"])
    if data.get("entity_type"):
        params["entity_type"] = data["entity_type"]
    if data.get("entity"):
        params["entity"] = data["entity"]
    after, before = form.date_range()
    if after:
        params["started_after"] = after.isoformat()
    if before:
        params["started_before"] = before.isoformat()
    return params


def with_workspace_project(request, workspace) -> dict:
    """The query, with the switcher's project when the form did not say (first visit)."""
    data = request.GET.copy()
    if "project" not in data and workspace.project is not None:
        data["project"] = str(workspace.project.pk)
    return data


def filtered_sessions(request, workspace):
    """The list's form and its filtered queryset (of the current team; any deletion state),
    or errors. Shared by the list and bulk delete, so both see the same sessions."""
    form = SessionListForm(with_workspace_project(request, workspace), projects=workspace.projects)
    if not form.is_valid():
        return form, None, []
    filterset = SessionFilter(filter_params(form), queryset=workspace.sessions())
    if not filterset.is_valid():
        return form, None, [f"{k}: {' '.join(v)}" for k, v in filterset.errors.items()]
    return form, filterset.qs, []


@team_required
def session_list(request):
    workspace = Workspace.of(request)
    form, queryset, errors = filtered_sessions(request, workspace)
    page = None
    sort = (
        form.cleaned_data.get("sort") if hasattr(form, "cleaned_data") else None
    ) or DEFAULT_SORT
    if queryset is not None:
        rows = (
            queryset.alive()
            .select_related("project")
            .only(*LIST_COLUMNS)
            .annotate(first_request=first_request())
        )
        try:
            page = paginate(rows, sort, request.GET.get("cursor"))
        except BadCursor as exc:
            errors.append(str(exc))
            page = paginate(rows, sort, None)
    return render(
        request,
        "web/sessions/list.html",
        {
            "form": form,
            "page": page,
            "errors": errors,
            "sort": sort,
            "can_delete": workspace.can(Role.ADMIN),
        },
    )
