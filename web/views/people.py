"""The people pages (docs/people.md): everyone the agents worked with, and one person's diary,
day by day (newest first), each day's entries per character, with their recent sessions and
a download of the diary as Markdown.

Reads go through the workspace's access (the current team, and the project picked in the
switcher): another team's person has no sessions and no diary here, so their page is a 404.
"""

from __future__ import annotations

from itertools import groupby

from django.db.models import Count, Max
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memories.diary.export import diary_zip, path_part
from memories.diary.query import narrowed, visible
from memories.diary.recent import person_sessions
from sessions.models import Session
from web.scope import Workspace, team_required

DAYS_SHOWN = 60
SESSIONS_SHOWN = 10


@team_required
@require_GET
def people_list(request):
    access = Workspace.of(request).project_access
    sessions = access.scope(Session.objects.alive()).exclude(user_name="")
    people = (
        sessions.values("user_name")
        .annotate(sessions=Count("id"), last=Max("started_at"))
        .order_by("-last", "user_name")
    )
    days = dict(
        visible(access)
        .values("person")
        .annotate(days=Count("day", distinct=True))
        .values_list("person", "days")
    )
    rows = [{**p, "days": days.get(p["user_name"], 0)} for p in people]
    return render(request, "web/people/list.html", {"people": rows})


def _diary_of(request, person: str):
    """The person's diary entries in the workspace, or 404 when they have neither sessions
    nor a diary here."""
    access = Workspace.of(request).project_access
    entries = narrowed(visible(access), person=person).select_related("project", "project__team")
    sessions = person_sessions(access, person)
    if not entries.exists() and not sessions.exists():
        raise Http404("No such person.")
    return entries, sessions


@team_required
@require_GET
def person_diary(request, person: str):
    entries, sessions = _diary_of(request, person)
    rows = entries.defer("embedding", "search_vector").order_by("-day", "character", "project")
    days = [(day, list(group)) for day, group in groupby(rows[: DAYS_SHOWN * 8], lambda e: e.day)]
    recent = sessions.select_related("project").order_by("-started_at", "-id")[:SESSIONS_SHOWN]
    return render(
        request,
        "web/people/diary.html",
        {"person": person, "days": days[:DAYS_SHOWN], "recent": recent},
    )


@team_required
@require_GET
def person_diary_export(request, person: str):
    entries, _ = _diary_of(request, person)
    response = HttpResponse(diary_zip(entries), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="diary-{path_part(person)}.zip"'
    return response
