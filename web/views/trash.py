"""The trash: deleted sessions with their recovery deadline; restore and purge (admins)."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.shortcuts import redirect, render

from sessions.forget.lifecycle import purge, recovery_deadline, restore
from sessions.models import Session
from teams.access import Reading
from teams.models import Role
from web.pagination import TRASH_SORTS, paginate_or_first
from web.scope import Workspace, team_required
from web.views.util import session_action, wrong_state_redirect


@team_required
def trash(request):
    workspace = Workspace.of(request)
    # Listed, as the session list is: an admin restores or purges a private session too.
    queryset = workspace.project_access.scope(Session.objects.in_trash(), reading=Reading.LISTED)
    queryset = queryset.select_related("project", "deleted_by", "owner")
    page, errors = paginate_or_first(
        queryset, "deleted", request.GET.get("cursor"), sorts=TRASH_SORTS
    )
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


@session_action(Role.ADMIN, methods=("POST",), reading=Reading.LISTED)
def session_restore(request, session):
    if elsewhere := wrong_state_redirect(request, session, in_trash=True):
        return elsewhere
    restore(session)
    messages.success(request, f"Restored “{session.title or session.public_id}”.")
    return redirect("web:session", public_id=session.public_id)


@session_action(Role.ADMIN, reading=Reading.LISTED)
def session_purge(request, session):
    then = "delete it first, then purge it from the trash"
    if elsewhere := wrong_state_redirect(request, session, in_trash=True, then=then):
        return elsewhere
    if request.method == "POST":
        purge(session)
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
