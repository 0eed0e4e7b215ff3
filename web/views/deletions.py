"""The deletion records of the current team (admins): who deleted what, when, why, how much,
and whether it was restored or purged. They hold no content and outlive the purge."""

from __future__ import annotations

from django.shortcuts import render

from sessions.forget.records import admin_records, record_state
from teams.models import Role
from web.pagination import DELETION_SORTS, paginate_or_first
from web.scope import Workspace, team_required


@team_required
def deletions(request):
    workspace = Workspace.of(request)
    workspace.require(Role.ADMIN)
    records = admin_records(workspace.project_access)
    page, errors = paginate_or_first(
        records, "newest", request.GET.get("cursor"), sorts=DELETION_SORTS
    )
    rows = [(record, record_state(record)) for record in page.rows]
    return render(request, "web/deletions.html", {"page": page, "rows": rows, "errors": errors})
