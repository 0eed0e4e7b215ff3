"""Bulk delete and restore: a selection of the list, or everything matching the list's
current filter (agent, topic, date range, …); each behind a confirmation that says how many
sessions and messages will go. Admins only. The rules (what moves, the cap, one
transaction) are ``sessions.forget.bulk``'s; these views read the request and say what
happened.
"""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from sessions.forget.bulk import (
    MAX_BULK,
    NothingToDelete,
    TooManyToDelete,
    plan_bulk_delete,
    restore_many,
    soft_delete_many,
)
from sessions.forget.records import criteria_of
from teams.access import Reading
from teams.models import Role
from web.forms import DeleteForm
from web.scope import Workspace, team_required
from web.views.sessions import filtered_sessions

SHOWN = 8
SELECTION_KEY = "session"
NOT_FILTERS = ("sort", "project")  # a project alone is not a filter to delete by


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _selection(request, workspace):
    ids = [i.strip() for i in request.POST.getlist(SELECTION_KEY) if i.strip()][:MAX_BULK]
    # Listed, as the list shows them: an admin deletes or restores a private session too.
    return ids, workspace.sessions(Reading.LISTED).filter(public_id__in=ids)


def _list_url(query: str) -> str:
    return reverse("web:sessions") + (f"?{query}" if query else "")


def _by_filter(request, workspace, query: str):
    """The list's filter form and the sessions it matches, or a redirect saying why not:
    the filters are invalid, or none narrows the list (everything would go)."""
    form, queryset = filtered_sessions(request, workspace)
    if queryset is None:
        problems = (f"{name}: {' '.join(errs)}" for name, errs in form.errors.items())
        messages.error(request, "Fix the filters first: " + "; ".join(problems))
        return None, None, redirect(_list_url(query))
    narrowing = [
        k for k, v in form.cleaned_data.items() if v not in (None, "") and k not in NOT_FILTERS
    ]
    if not narrowing:
        messages.info(
            request,
            "Pick at least one filter (agent, topic, date range, …) before deleting "
            "everything that matches it, or tick the sessions to delete.",
        )
        return None, None, redirect(_list_url(query))
    return form, queryset, None


def _nothing_to_delete(request, already: int, query: str):
    if already:
        messages.info(
            request,
            f"{'That session is' if already == 1 else f'Those {already:,} sessions are'} "
            "already in the trash: nothing to delete. Restore them from the trash instead.",
        )
        return redirect("web:trash")
    messages.info(request, "No sessions match: nothing to delete.")
    return redirect(_list_url(query))


def _deleted_message(plan, result) -> str:
    days = plan.min_days
    text = (
        f"Moved {_plural(result.done, 'session')} and {_plural(result.messages, 'message')} to "
        f"the trash; an admin can restore them for {days} day{'s' if days != 1 else ''}."
    )
    already = result.skipped + plan.already
    if already:
        text += (
            f" {_plural(already, 'session')} {'was' if already == 1 else 'were'} already in "
            "the trash."
        )
    return text


@team_required
@require_http_methods(["GET", "POST"])
def bulk_delete(request):
    """GET ?<the list's filters>: confirm deleting everything matching. POST ``session``
    ids (from the list's checkboxes): confirm deleting them. POST ``confirm``: do it."""
    workspace = Workspace.of(request)
    workspace.require(Role.ADMIN)
    by_filter = SELECTION_KEY not in request.POST and "selection" not in request.POST
    query = request.GET.urlencode()
    if by_filter:
        asked = None
        form, queryset, refused = _by_filter(request, workspace, query)
        if refused is not None:
            return refused
    elif not request.POST.getlist(SELECTION_KEY):
        messages.info(request, "Tick the sessions to delete first.")
        return redirect(_list_url(query))
    else:
        form = None
        asked, queryset = _selection(request, workspace)
    try:
        plan = plan_bulk_delete(queryset)
    except NothingToDelete as refusal:
        return _nothing_to_delete(request, refusal.already, query)
    except TooManyToDelete as refusal:
        messages.error(
            request,
            f"{refusal.count:,} sessions match; at most {refusal.limit:,} move to the trash "
            "at a time. Narrow the filter (a date range, say) and delete in steps.",
        )
        return redirect(_list_url(query))

    delete_form = DeleteForm(request.POST if "confirm" in request.POST else None)
    if "confirm" in request.POST and delete_form.is_valid():
        result = soft_delete_many(
            plan,
            by=request.user,
            reason=delete_form.cleaned_data["reason"],
            criteria=criteria_of(form.filters) if by_filter else None,
        )
        messages.success(request, _deleted_message(plan, result))
        return redirect(_list_url(query) if by_filter else reverse("web:sessions"))

    examples = list(
        plan.alive.select_related("project")
        .only("public_id", "title", "agent_name", "started_at", "message_count", "project__name")
        .order_by("-started_at", "-id")[:SHOWN]
    )
    missing = len(set(asked)) - queryset.count() if asked is not None else 0
    return render(
        request,
        "web/sessions/bulk_delete.html",
        {
            "summary": plan,
            "examples": examples,
            "more": plan.sessions - len(examples),
            "by_filter": by_filter,
            "filters": _described(form) if form is not None else [],
            "ids": asked or [],
            "already": plan.already,
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
    result = restore_many(queryset)
    restored, not_in_trash = result.done, result.skipped
    if restored:
        text = f"Restored {_plural(restored, 'session')} and {_plural(result.messages, 'message')}."
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
