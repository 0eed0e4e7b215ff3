"""The trash: deleted sessions with their recovery deadline; restore and purge (admins)."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from sessions.forget.lifecycle import LifecycleConflict, purge, recovery_deadline, restore
from sessions.models import Session
from teams.models import Role
from web.pagination import TRASH_SORTS, BadCursor, paginate
from web.scope import Workspace, team_required


@team_required
def trash(request):
    workspace = Workspace.of(request)
    queryset = workspace.project_access.scope(Session.objects.in_trash())
    queryset = queryset.select_related("project", "deleted_by")
    errors = []
    try:
        page = paginate(queryset, "deleted", request.GET.get("cursor"), sorts=TRASH_SORTS)
    except BadCursor as exc:
        errors.append(str(exc))
        page = paginate(queryset, "deleted", None, sorts=TRASH_SORTS)
    rows = [
        (s, s.deleted_at + timedelta(days=s.project.trash_days)) for s in page.rows
    ]  # the recovery deadline, without a query per row
    return render(
        request,
        "web/trash/list.html",
        {
            "page": page,
            "rows": rows,
            "errors": errors,
            "can_manage": workspace.can(Role.ADMIN),
        },
    )


@team_required
@require_POST
def session_restore(request, public_id):
    workspace = Workspace.of(request)
    session = workspace.session_or_404(public_id)
    workspace.require(Role.ADMIN, session.team_id)
    try:
        restore(session)
    except LifecycleConflict:
        messages.info(request, f"“{session.title or session.public_id}” is not in the trash.")
        return redirect("web:session", public_id=public_id)
    messages.success(request, f"Restored “{session.title or session.public_id}”.")
    return redirect("web:session", public_id=public_id)


@team_required
@require_http_methods(["GET", "POST"])
def session_purge(request, public_id):
    workspace = Workspace.of(request)
    session = workspace.session_or_404(public_id)
    workspace.require(Role.ADMIN, session.team_id)
    if session.deleted_at is None:
        messages.info(
            request,
            f"“{session.title or session.public_id}” is not in the trash: delete it first, "
            "then purge it from the trash.",
        )
        return redirect("web:session", public_id=public_id)
    if request.method == "POST":
        try:
            purge(session)
        except LifecycleConflict as exc:
            messages.info(request, str(exc))
            return redirect("web:trash")
        messages.success(
            request,
            f"Purged “{session.title or session.public_id}” and its "
            f"{session.message_count:,} messages for good.",
        )
        return redirect("web:trash")
    return render(
        request,
        "web/trash/purge.html",
        {"session": session, "deadline": recovery_deadline(session)},
    )
