"""Bulk delete and restore (seed 001 §8.2): a selection of the list, or everything matching
the list's current filter (agent, topic, date range, …); each behind a confirmation that
says how many sessions and messages will go. Admins only. Everything happens in one
transaction through ``sessions.forget.lifecycle`` (soft delete into the trash, restore),
so a failure leaves nothing half-done, and rows already in the wanted state are counted and
reported, never an error.
"""

from __future__ import annotations

import logging

from django.contrib import messages
from django.db import transaction
from django.db.models import Count, Max, Min, Sum
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from sessions.forget.lifecycle import LifecycleConflict, restore, soft_delete
from teams.models import Role
from web.forms import DeleteForm
from web.scope import Workspace, team_required
from web.views.sessions import filtered_sessions

logger = logging.getLogger(__name__)

# One confirmation moves at most this many sessions (one transaction; a larger filter is
# narrowed, e.g. by date range, and deleted in steps).
MAX_BULK = 5000
SHOWN = 8
SELECTION_KEY = "session"
NOT_FILTERS = ("sort", "project")  # a project alone is not a filter to delete by


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _summary(queryset) -> dict:
    return queryset.aggregate(
        sessions=Count("id"),
        messages=Sum("message_count"),
        size=Sum("size_bytes"),
        min_days=Min("project__trash_days"),
        max_days=Max("project__trash_days"),
    )


def _selection(request, workspace):
    ids = [i.strip() for i in request.POST.getlist(SELECTION_KEY) if i.strip()][:MAX_BULK]
    return ids, workspace.sessions().filter(public_id__in=ids)


def _list_url(query: str) -> str:
    return reverse("web:sessions") + (f"?{query}" if query else "")


@team_required
@require_http_methods(["GET", "POST"])
def bulk_delete(request):
    """GET ?<the list's filters>: confirm deleting everything matching. POST ``session``
    ids (from the list's checkboxes): confirm deleting them. POST ``confirm``: do it."""
    workspace = Workspace.of(request)
    workspace.require(Role.ADMIN)
    by_filter = SELECTION_KEY not in request.POST and "selection" not in request.POST
    query = request.GET.urlencode()
    if not by_filter and not request.POST.getlist(SELECTION_KEY):
        messages.info(request, "Tick the sessions to delete first.")
        return redirect(_list_url(query))
    if by_filter:
        form, queryset = filtered_sessions(request, workspace)
        if queryset is None:
            problems = (f"{name}: {' '.join(errs)}" for name, errs in form.errors.items())
            messages.error(request, "Fix the filters first: " + "; ".join(problems))
            return redirect(_list_url(query))
        narrowing = [
            k for k, v in form.cleaned_data.items() if v not in (None, "") and k not in NOT_FILTERS
        ]
        if not narrowing:
            messages.info(
                request,
                "Pick at least one filter (agent, topic, date range, …) before deleting "
                "everything that matches it, or tick the sessions to delete.",
            )
            return redirect(_list_url(query))
        alive = queryset.alive()
        asked = None
    else:
        form = None
        asked, queryset = _selection(request, workspace)
        alive = queryset.alive()
    summary = _summary(alive)
    already = queryset.in_trash().count()
    missing = len(set(asked)) - queryset.count() if asked is not None else 0

    if summary["sessions"] == 0:
        if already:
            messages.info(
                request,
                f"{'That session is' if already == 1 else f'Those {already:,} sessions are'} "
                "already in the trash: nothing to delete. Restore them from the trash instead.",
            )
            return redirect("web:trash")
        messages.info(request, "No sessions match: nothing to delete.")
        return redirect(_list_url(query))
    if summary["sessions"] > MAX_BULK:
        messages.error(
            request,
            f"{summary['sessions']:,} sessions match; at most {MAX_BULK:,} move to the trash "
            "at a time. Narrow the filter (a date range, say) and delete in steps.",
        )
        return redirect(_list_url(query))

    delete_form = DeleteForm(request.POST if "confirm" in request.POST else None)
    if "confirm" in request.POST and delete_form.is_valid():
        reason = delete_form.cleaned_data["reason"]
        moved = skipped = messages_moved = 0
        with transaction.atomic():
            for session in alive.select_for_update(of=("self",)).only(
                "id", "public_id", "message_count", "project_id"
            ):
                try:
                    soft_delete(session, by=request.user, reason=reason)
                except LifecycleConflict:
                    skipped += 1
                    continue
                moved += 1
                messages_moved += session.message_count
        logger.info("%s moved %d session(s) to the trash in bulk", request.user, moved)
        days = summary["min_days"]
        text = (
            f"Moved {_plural(moved, 'session')} and {_plural(messages_moved, 'message')} to "
            f"the trash; an admin can restore them for {days} day{'s' if days != 1 else ''}."
        )
        if skipped or already:
            n = skipped + already
            text += f" {_plural(n, 'session')} {'was' if n == 1 else 'were'} already in the trash."
        messages.success(request, text)
        return redirect(_list_url(query) if by_filter else reverse("web:sessions"))

    examples = list(
        alive.select_related("project")
        .only("public_id", "title", "agent_name", "started_at", "message_count", "project__name")
        .order_by("-started_at", "-id")[:SHOWN]
    )
    return render(
        request,
        "web/sessions/bulk_delete.html",
        {
            "summary": summary,
            "examples": examples,
            "more": summary["sessions"] - len(examples),
            "by_filter": by_filter,
            "filters": _described(form) if form is not None else [],
            "ids": asked or [],
            "already": already,
            "missing": max(missing, 0),
            "query": query,
            "delete_form": delete_form,
        },
    )


def _described(form) -> list[tuple[str, str]]:
    """The active filters as (label, value) for the confirmation page."""
    out = []
    names = dict(form.fields["project"].choices)
    for name, value in form.cleaned_data.items():
        if value in (None, "") or name in ("sort",):
            continue
        field = form.fields[name]
        if name == "project":
            value = names.get(value, value)
        elif getattr(field, "choices", None):
            value = dict(field.choices).get(value, value)
        out.append((str(field.label or name.replace("_", " ").capitalize()), str(value)))
    return out


@team_required
@require_POST
def bulk_restore(request):
    """Restore the ticked sessions of the trash, in one transaction."""
    workspace = Workspace.of(request)
    workspace.require(Role.ADMIN)
    asked, queryset = _selection(request, workspace)
    if not asked:
        messages.info(request, "Tick the sessions to restore first.")
        return redirect("web:trash")
    restored = not_in_trash = message_count = 0
    with transaction.atomic():
        locked = queryset.select_for_update(of=("self",))
        for session in locked.only("id", "public_id", "message_count"):
            try:
                restore(session)
            except LifecycleConflict:
                not_in_trash += 1
                continue
            restored += 1
            message_count += session.message_count
    if restored:
        text = f"Restored {_plural(restored, 'session')} and {_plural(message_count, 'message')}."
        if not_in_trash:
            text += (
                f" {_plural(not_in_trash, 'session')} {'was' if not_in_trash == 1 else 'were'}"
                " not in the trash."
            )
        messages.success(request, text)
    else:
        messages.info(
            request, "None of the selected sessions is in the trash any more: nothing to restore."
        )
    return redirect("web:trash")
