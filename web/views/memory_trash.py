"""Deleted memories: the trash tab beside the session trash (with each recovery deadline),
restoring one (admins), and deleting many by filter from the Memories page (a preview that
says how many, then a confirmation). The rules are ``memories.forget.trash``'s; every read
goes through ``memories.retrieve.query.visible`` (another team's memory is a 404)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, time, timedelta

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from memories.capture.record import InvalidMemory, MemoryConflict
from memories.forget import trash
from memories.forget.records import deleted_by_labels
from memories.retrieve.query import visible
from teams.models import Role
from web.memory_forms import MemoryBulkDeleteForm
from web.pagination import TRASH_SORTS, paginate_or_first
from web.scope import Workspace, team_required


def _memories(n: int) -> str:
    return f"{n:,} {'memory' if n == 1 else 'memories'}"


@team_required
def memory_trash(request):
    workspace = Workspace.of(request)
    memories = visible(workspace.project_access, include_deleted=True)
    memories = trash.in_trash(memories).select_related("project", "deleted_by")
    page, errors = paginate_or_first(
        memories.defer("embedding", "search_vector"),
        "deleted",
        request.GET.get("cursor"),
        sorts=TRASH_SORTS,
    )
    labels = deleted_by_labels(page.rows)
    rows = [(m, trash.recovery_deadline(m), labels[m.pk]) for m in page.rows]
    return render(
        request,
        "web/trash/memories.html",
        {
            "page": page,
            "rows": rows,
            "errors": errors,
            "can_manage": workspace.can(Role.ADMIN),
        },
    )


@team_required
@require_POST
def memory_restore(request, project_id, public_id):
    workspace = Workspace.of(request)
    memory = (
        trash.in_trash(visible(workspace.access, include_deleted=True))
        .select_related("project")
        .filter(project_id=project_id, public_id=public_id)
        .first()
    )
    if memory is None:
        raise Http404("No such memory in the trash.")
    workspace.require(Role.ADMIN, memory.team_id)
    try:
        trash.restore(memory, by=request.user)
    except MemoryConflict as exc:
        messages.info(request, str(exc))
        return redirect("web:memory-trash")
    messages.success(request, f"Restored {memory.public_id}.")
    return redirect("web:memory", project_id=memory.project_id, public_id=memory.public_id)


@team_required
@require_POST
def memory_restore_selected(request):
    """Restore the ticked memories of the trash (``project_id:public_id`` each), one by
    one: a memory past its deadline, or restored meanwhile, is told, not fatal."""
    workspace = Workspace.of(request)
    workspace.require(Role.ADMIN)
    wanted = set()
    for value in request.POST.getlist("memory"):
        project_id, _, public_id = value.partition(":")
        if project_id.isdigit() and public_id:
            wanted.add((int(project_id), public_id))
    if not wanted:
        messages.info(request, "Tick the memories to restore first.")
        return redirect("web:memory-trash")
    candidates = trash.in_trash(visible(workspace.access, include_deleted=True)).filter(
        project_id__in={project_id for project_id, _ in wanted},
        public_id__in={public_id for _, public_id in wanted},
    )
    restored, refused = 0, []
    for memory in candidates.select_related("project").order_by("pk"):
        if (memory.project_id, memory.public_id) not in wanted:
            continue
        workspace.require(Role.ADMIN, memory.team_id)
        try:
            trash.restore(memory, by=request.user)
        except MemoryConflict as exc:
            refused.append(str(exc))
        else:
            restored += 1
    if restored:
        messages.success(request, f"Restored {_memories(restored)}.")
    for reason in refused:
        messages.info(request, reason)
    if not restored and not refused:
        messages.info(request, "None of the selected memories is in the trash any more.")
    return redirect("web:memory-trash")


def _selected(workspace: Workspace, data: dict):
    """The memories a bulk delete's form matches, in the current team (its project when
    one is picked)."""
    project = next((p for p in workspace.projects if p.pk == data.get("project")), None)
    access = workspace.narrowed(project.pk if project else None)
    memories = visible(access, include_deleted=True)
    if project is not None:
        memories = memories.filter(project=project)
    for name in ("topic", "type", "agent", "person"):
        if data.get(name):
            memories = memories.filter(**{name: data[name].strip()})
    if data.get("since"):
        memories = memories.filter(occurred_at__gte=datetime.combine(data["since"], time(), UTC))
    if data.get("until"):  # the day is included: up to the next midnight
        end = datetime.combine(data["until"] + timedelta(days=1), time(), UTC)
        memories = memories.filter(occurred_at__lt=end)
    return memories


def _criteria(data: dict) -> dict:
    criteria = {name: data[name] for name in MemoryBulkDeleteForm.NARROWING if data.get(name)}
    for name in ("since", "until"):
        if name in criteria:
            criteria[name] = criteria[name].isoformat()
    if data.get("project"):
        criteria["project"] = data["project"]
    if data.get("all"):
        criteria["all"] = True
    return criteria


@team_required
@require_http_methods(["GET", "POST"])
def memory_bulk_delete(request):
    """GET: the form (prefilled from the query string, e.g. the list's filters). POST
    ``preview``: how many match and the newest few, nothing changes. POST ``confirm`` (with a
    reason): move them to the trash."""
    workspace = Workspace.of(request)
    workspace.require(Role.ADMIN)
    if request.method == "POST":
        form = MemoryBulkDeleteForm(request.POST, projects=workspace.projects)
    else:
        form = MemoryBulkDeleteForm(initial=request.GET.dict(), projects=workspace.projects)
    plan, previewed = None, ""
    if request.method == "POST" and form.is_valid():
        selected = _selected(workspace, form.cleaned_data)
        plan = trash.plan_bulk_delete(selected.select_related("project"))
        previewed = json.dumps(_criteria(form.cleaned_data), sort_keys=True)
        # Only what was previewed is deleted: filters changed since show a new preview.
        if "confirm" in request.POST and request.POST.get("previewed") == previewed:
            reason = form.cleaned_data["reason"].strip()
            if not reason:
                form.add_error("reason", "Say why these memories are deleted.")
            else:
                try:
                    done = trash.delete_many(
                        selected,
                        by=request.user,
                        reason=reason,
                        criteria=_criteria(form.cleaned_data),
                    )
                except InvalidMemory as exc:
                    form.add_error(None, str(exc))
                else:
                    messages.success(
                        request,
                        f"Moved {_memories(done.count)} to the trash; an admin can restore "
                        "them until their recovery deadline.",
                    )
                    return redirect("web:memory-trash")
    return render(
        request,
        "web/memories/bulk_delete.html",
        {
            "form": form,
            "plan": plan,
            "more": plan.count - len(plan.sample) if plan else 0,
            "too_many": plan is not None and plan.count > trash.MAX_BULK,
            "limit": trash.MAX_BULK,
            "previewed": previewed,
        },
    )
