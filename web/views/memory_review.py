"""The review queue: the memories proposed for review with their evidence, accepted (as
they are or edited), or rejected, one by one or in bulk, by keyboard; the rejections, which
can be undone; and the actions of one memory's page (accept, reject, revert, reopen).

Reads go through ``memories.retrieve.query.visible`` (another team's memory is a 404);
changes through ``memories/capture/review.py``. Viewers read; members review."""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.db.models import Prefetch
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from memories.capture import review
from memories.capture.record import InvalidMemory, MemoryConflict
from memories.models import Memory, MemoryEvent, MemoryEvidence, MemoryStatus
from memories.retrieve.query import visible
from sessions.models import KEYWORD_VECTORS
from teams.models import Role
from web.scope import Workspace, team_required
from web.views.memories import HEAVY_COLUMNS, memory_action, memory_url

QUEUE_PAGE = 50


def _queue(access, status: str):
    evidence = (
        MemoryEvidence.objects.filter(session__deleted_at__isnull=True)
        # Quotes of sessions the reader reads only (a memory shared out of a private one).
        .filter(access.readable(MemoryEvidence))
        .select_related("message", "session")
        .defer(*(f"message__{c}" for c in KEYWORD_VECTORS), "session__metadata")
        .order_by("message__seq")
    )
    return (
        visible(access)
        .filter(status=status)
        .select_related("project", "session")
        .defer(*HEAVY_COLUMNS)
        .prefetch_related(Prefetch("evidence", queryset=evidence))
        .order_by("-occurred_at", "-id")
    )


def _chosen(workspace: Workspace, pks: list[str]) -> list[Memory]:
    wanted = [int(pk) for pk in pks if pk.isdigit() and len(pk) < 19]
    found = list(visible(workspace.access).filter(pk__in=wanted).select_related("project"))
    if len(found) != len(set(wanted)):
        raise Http404("No such memory.")
    for memory in found:
        workspace.require(Role.MEMBER, memory.team_id)
    return found


@team_required
@require_http_methods(["GET", "POST"])
def review_queue(request):
    """GET: the proposals of the current project (or team), newest first. POST: accept or
    reject the chosen ones (``ids``, or one row's own button), each accepted one with its
    edited statement when it was changed; all or nothing."""
    workspace = Workspace.of(request)
    if request.method == "POST":
        return _review_posted(request, workspace)
    queue = _queue(workspace.project_access, MemoryStatus.PROPOSED)
    rows = list(queue[: QUEUE_PAGE + 1])
    return render(
        request,
        "web/memories/review.html",
        {
            "rows": rows[:QUEUE_PAGE],
            "more": len(rows) > QUEUE_PAGE,
            "waiting": queue.count() if len(rows) > QUEUE_PAGE else len(rows),
            "can_review": workspace.can(Role.MEMBER),
        },
    )


def _review_posted(request, workspace: Workspace):
    post = request.POST
    reason = post.get("reason", "").strip()[:500]
    if post.get("accept_one") or post.get("reject_one"):
        action = "accept" if post.get("accept_one") else "reject"
        ids = [post.get("accept_one") or post.get("reject_one")]
    else:
        action = post.get("bulk", "")
        ids = post.getlist("ids")
    if action not in ("accept", "reject") or not ids:
        messages.info(request, "Choose the memories to accept or reject first.")
        return redirect("web:memory-review")
    chosen = _chosen(workspace, ids)
    try:
        with transaction.atomic():
            for memory in chosen:
                if action == "accept":
                    edited = post.get(f"content-{memory.pk}")
                    changed = edited is not None and edited.strip() != memory.content
                    review.accept(
                        memory, by=request.user, reason=reason, content=edited if changed else None
                    )
                else:
                    review.reject(memory, by=request.user, reason=reason)
    except (InvalidMemory, MemoryConflict) as exc:
        messages.error(request, f"Nothing was changed: {exc}")
        return redirect("web:memory-review")
    names = ", ".join(m.public_id for m in chosen[:5]) + ("…" if len(chosen) > 5 else "")
    done = "Accepted" if action == "accept" else "Rejected"
    messages.success(request, f"{done} {len(chosen)}: {names}.")
    return redirect("web:memory-review")


@team_required
@require_http_methods(["GET", "POST"])
def rejections(request):
    """The rejected memories (what will not be proposed again); POST ``id`` undoes one."""
    workspace = Workspace.of(request)
    if request.method == "POST":
        [memory] = _chosen(workspace, [request.POST.get("id", "")])
        try:
            review.unreject(memory, by=request.user)
        except MemoryConflict as exc:
            messages.info(request, str(exc))
        else:
            messages.success(request, f"{memory.public_id} is proposed again, back in the queue.")
        return redirect("web:memory-rejections")
    rows = list(_queue(workspace.project_access, MemoryStatus.REJECTED)[: QUEUE_PAGE + 1])
    last = {
        event.memory_id: event
        for event in MemoryEvent.objects.filter(
            memory_id__in=[m.pk for m in rows], to_status=MemoryStatus.REJECTED
        )
        .select_related("by")
        .order_by("at", "id")
    }
    for memory in rows:
        memory.rejection = last.get(memory.pk)
    return render(
        request,
        "web/memories/rejections.html",
        {
            "rows": rows[:QUEUE_PAGE],
            "more": len(rows) > QUEUE_PAGE,
            "can_review": workspace.can(Role.MEMBER),
        },
    )


@memory_action(Role.MEMBER)
def memory_status(request, memory):
    """One memory's page: accept (``content`` to edit it first), reject, unreject, revert
    (``reason`` needed), reopen or confirm it."""
    action = request.POST.get("action", "")
    reason = request.POST.get("reason", "")
    if action == "accept":
        content = request.POST.get("content")
        review.accept(memory, by=request.user, reason=reason, content=content or None)
    elif action == "reject":
        review.reject(memory, by=request.user, reason=reason)
    elif action == "unreject":
        review.unreject(memory, by=request.user, reason=reason)
    elif action == "revert":
        review.revert(memory, by=request.user, reason=reason)
    elif action == "reopen":
        review.reopen(memory, by=request.user, reason=reason)
    elif action == "confirm":
        review.confirm(memory, by=request.user, reason=reason)
    else:
        messages.info(request, "Unknown action.")
        return redirect(memory_url(memory))
    messages.success(request, f"{memory.public_id} {DONE[action]}.")
    return redirect(memory_url(memory))


DONE = {
    "accept": "is accepted: agents get it from now on",
    "reject": "is rejected: it is not used, and not proposed again",
    "unreject": "is proposed again, back in the review queue",
    "revert": "is reverted: kept as history, no longer used",
    "reopen": "is open again",
    "confirm": "is confirmed: no longer flagged as may be stale",
}
