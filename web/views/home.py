"""The start page (a placeholder for the dashboard) and the team/project switcher."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from web.scope import Workspace
from web.views.util import safe_next

RECENT = 8


@login_required
def home(request):
    workspace = Workspace.of(request)
    recent = workspace.sessions().alive()
    if workspace.project:
        recent = recent.filter(project=workspace.project)
    recent = (
        recent.select_related("project")
        .only(
            "public_id",
            "title",
            "agent_name",
            "agent_persona",
            "started_at",
            "message_count",
            "size_bytes",
            "topics",
            "project__name",
            "status",
        )
        .order_by("-started_at", "-id")[:RECENT]
    )
    return render(request, "web/home.html", {"recent": list(recent)})


@login_required
@require_POST
def switch(request):
    """Pick the current team and project: ``team`` and optional ``project`` ids, or
    ``project_choice`` as ``team:project``."""
    workspace = Workspace.of(request)

    def as_int(name):
        value = request.POST.get(name, "")
        return int(value) if value.isdigit() else None

    team, project = as_int("team"), as_int("project")
    choice = request.POST.get("project_choice", "")  # "team:project" from the header menu
    if ":" in choice:
        left, _, right = choice.partition(":")
        team = int(left) if left.isdigit() else None
        project = int(right) if right.isdigit() else None
    workspace.switch(team, project)
    return redirect(safe_next(request, reverse("web:sessions")))
