"""The dashboard (the start page) and the team/project switcher.

Every figure is one aggregate query in PostgreSQL over the current team (and project, when
one is picked), on the indexed columns: no row of a session is ever loaded into Python but
the few recent ones shown. The enrichment card counts over messages, so it loads on its own
(htmx), never holding the page back.

What a figure shows decides how much of a session it reads (docs/visibility.md): counts,
the activity chart and the recent sessions' titles are what the sessions list shows
(``Reading.LISTED``: a team's admins count its private sessions too, no one else does); the
top entities come out of messages, so only the sessions whose messages the caller reads
count (``Reading.CONTENT``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta

from django.contrib import messages
from django.db import transaction
from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncDate
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from sessions.enrich import pipeline
from sessions.entity_stats import entity_counts
from sessions.forget.retention import next_run, retention_plan
from sessions.models import Entity, Lifecycle, Message, Session
from sessions.poke import poke_enrichment
from teams.access import Reading
from teams.models import Role
from web.scope import Workspace, team_required
from web.views.util import is_htmx, safe_next

RECENT = 8
# What a listed session shows (no topics or summary: an admin lists sessions it may not read).
RECENT_COLUMNS = (
    "public_id", "title", "agent_name", "agent_persona", "started_at", "message_count",
    "size_bytes", "project__name", "status",
)  # fmt: skip
CHART_DAYS = 30
TOP_ENTITIES = 12
# Chart geometry (SVG user units; the SVG scales to its box).
CHART_W, CHART_H, CHART_PAD = 600, 120, 2


@dataclass
class Bar:
    day: object
    value: int
    x: float
    y: float
    width: float
    height: float


def _bars(days: list, values: list[int]) -> dict:
    top = max(values) if values else 0
    slot = CHART_W / max(len(values), 1)
    bars = []
    for day, value in zip(days, values, strict=True):
        height = 0.0 if not top else (CHART_H - CHART_PAD) * value / top
        if value and height < 2:
            height = 2.0  # a day with anything at all stays visible
        bars.append(
            Bar(day, value, round(slot * len(bars) + 1, 2), round(CHART_H - height, 2),
                round(slot - 2, 2), round(height, 2))
        )  # fmt: skip
    return {"bars": bars, "max": top, "total": sum(values), "width": CHART_W, "height": CHART_H}


def activity(sessions, days: int = CHART_DAYS) -> dict:
    """Sessions and their messages per day (by start) over the last ``days`` days: one
    GROUP BY on the (team|project, started_at) index."""
    tz = timezone.get_current_timezone()
    today = timezone.localdate()
    first = today - timedelta(days=days - 1)
    since = timezone.make_aware(datetime.combine(first, time.min), tz)
    rows = (
        sessions.filter(started_at__gte=since)
        .annotate(day=TruncDate("started_at", tzinfo=tz))
        .values("day")
        .annotate(n=Count("id"), m=Sum("message_count"))
        .order_by()
    )
    by_day = {r["day"]: (r["n"], r["m"] or 0) for r in rows}
    span = [first + timedelta(days=i) for i in range(days)]
    return {
        "first": first,
        "since": since,
        "last": today,
        "sessions": _bars(span, [by_day.get(d, (0, 0))[0] for d in span]),
        "messages": _bars(span, [by_day.get(d, (0, 0))[1] for d in span]),
    }


def project_totals(workspace) -> tuple[list[dict], dict]:
    """Sessions, messages and storage per project of the current team (one GROUP BY), with
    what waits in the trash."""
    alive = Q(deleted_at__isnull=True)
    listed = workspace.team_access.scope(Session.objects.all(), reading=Reading.LISTED)
    rows = {
        r["project_id"]: r
        for r in listed.values("project_id")
        .annotate(
            sessions=Count("id", filter=alive),
            messages=Sum("message_count", filter=alive),
            storage=Sum("size_bytes", filter=alive),
            trashed=Count("id", filter=~alive),
        )
        .order_by()
    }
    projects = workspace.projects if workspace.project is None else [workspace.project]
    out = []
    for p in projects:
        r = rows.get(p.pk, {})
        out.append(
            {
                "project": p,
                "sessions": r.get("sessions") or 0,
                "messages": r.get("messages") or 0,
                "storage": r.get("storage") or 0,
                "trashed": r.get("trashed") or 0,
            }
        )
    totals = {k: sum(row[k] for row in out) for k in ("sessions", "messages", "storage", "trashed")}
    return out, totals


def top_entities(workspace, since) -> list[dict]:
    """The entities most sessions touched since ``since`` (sessions of the scope, alive)."""
    access = workspace.project_access
    content = Reading.CONTENT  # entities are read out of messages
    sessions = access.scope(Session.objects.alive(), reading=content).filter(started_at__gte=since)
    entities = access.scope(
        Entity.objects.filter(session__in=sessions.values("id")),
        "session__project_id",
        reading=content,
    )
    return entity_counts(entities, TOP_ENTITIES)


def lifecycle_counts(sessions) -> list[dict]:
    """Live sessions in each lifecycle state, every state listed (one GROUP BY)."""
    counts = dict(sessions.values_list("lifecycle").annotate(n=Count("id")).order_by())
    return [{"state": state, "count": counts.get(state.value, 0)} for state in Lifecycle]


def retention_runs(workspace) -> dict:
    """What the next retention run removes from each project in view that has a retention
    (one aggregate query per such project), and when it runs."""
    at = next_run()
    projects = workspace.projects if workspace.project is None else [workspace.project]
    kept = [p for p in projects if p.retention_days is None]
    plans = [
        {"project": p, "plan": retention_plan(p, p.retention_days, now=at)}
        for p in projects
        if p.retention_days is not None
    ]
    return {"at": at, "plans": plans, "kept": kept}


@team_required
def home(request):
    workspace = Workspace.of(request)
    context = {"chart_days": CHART_DAYS}
    scoped = workspace.project_access.scope(Session.objects.alive(), reading=Reading.LISTED)
    context["recent"] = list(
        scoped.select_related("project")
        .only(*RECENT_COLUMNS)
        .order_by("-started_at", "-id")[:RECENT]
    )
    context["projects"], context["totals"] = project_totals(workspace)
    context["activity"] = activity(scoped)
    context["entities"] = top_entities(workspace, context["activity"]["since"])
    context["lifecycle"] = lifecycle_counts(scoped)
    context["retention"] = retention_runs(workspace)
    return render(request, "web/home.html", context)


@team_required
def enrichment(request):
    """The dashboard's enrichment card: pending, failed, throughput (whole current team)."""
    workspace = Workspace.of(request)
    state = pipeline.pipeline_state(workspace.team_access)
    failed = state["messages"]["failed"] + state["sessions"]["failed"]
    pending = state["messages"]["pending"] + state["sessions"]["pending"]
    return render(
        request,
        "web/_enrichment.html" if is_htmx(request) else "web/enrichment.html",
        {
            "state": state,
            "failed": failed,
            "pending": pending,
            "can_retry": workspace.can(Role.ADMIN),
        },
    )


@team_required
@require_POST
def retry_failures(request):
    """Failed enrichment of the current team back to pending (admins), and wake a worker."""
    workspace = Workspace.of(request)
    workspace.require(Role.ADMIN)
    access = workspace.team_access
    with transaction.atomic():
        sessions = pipeline.retry_failed(access.scope(Session.objects.all()))
        msgs = pipeline.retry_failed(access.scope(Message.objects.all(), "session__project_id"))
    if sessions or msgs:
        transaction.on_commit(poke_enrichment)
        messages.success(
            request,
            f"Re-queued {msgs:,} message{'s' if msgs != 1 else ''} and {sessions:,} "
            f"session{'s' if sessions != 1 else ''}; the workers pick them up now.",
        )
    else:
        messages.info(request, "Nothing has failed: there is nothing to retry.")
    return redirect(safe_next(request, reverse("web:home")))


@team_required
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
