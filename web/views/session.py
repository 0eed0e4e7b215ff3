"""One session: the transcript (paged by seq), its enrichment, export, similar sessions,
and delete (a confirmation page first)."""

from __future__ import annotations

from collections import OrderedDict

from django.contrib import messages
from django.db.models import Count
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from search.similar import similar_sessions
from sessions.forget.compaction import set_pinned
from sessions.forget.lifecycle import LifecycleConflict, recovery_deadline, soft_delete
from sessions.forget.read_counts import opened, record_access
from sessions.forget.size import size_breakdown
from sessions.models import Entity, EntityType, Message
from sessions.portable.session_export import FORMATS as EXPORT_FORMATS
from sessions.portable.session_export import UnknownExportFormat, export_response
from teams.models import Role
from web.forms import DeleteForm
from web.scope import Workspace, team_required
from web.transcript import PAGE_SIZE, load_page
from web.views.memories import session_memories
from web.views.util import is_htmx, session_action, session_with_role, wrong_state_redirect

ENTITIES_SHOWN = 300
SIMILAR_SHOWN = 5
CONTEXT_BEFORE = 5  # messages shown above the one a link jumps to


def _int(value, default: int | None = None) -> int | None:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return default


def grouped_entities(session) -> OrderedDict:
    labels = dict(EntityType.choices)
    groups: OrderedDict = OrderedDict()
    rows = Entity.objects.of_session(session).order_by("type", "-count", "normalized")[
        :ENTITIES_SHOWN
    ]
    for entity in rows:
        groups.setdefault(labels.get(entity.type, entity.type), []).append(entity)
    return groups


def enrichment_state(session) -> dict:
    counts = dict(
        Message.objects.of_session(session)
        .values_list("enrichment_status")
        .annotate(n=Count("id"))
        .values_list("enrichment_status", "n")
    )
    return {"messages": counts, "session": session.enrichment_status}


@team_required
def session_detail(request, public_id):
    workspace = Workspace.of(request)
    session = workspace.session_or_404(public_id)
    if opened(session):
        messages.info(
            request,
            "This session was archived; it is restored. Search by meaning finds its "
            "messages again once they are embedded, in a moment.",
        )
    start = _int(request.GET.get("from"))
    at = _int(request.GET.get("at"))
    if at is not None and start is None:
        start = max(0, at - CONTEXT_BEFORE)
    start = start or 0
    page = load_page(session, after=start - 1)
    context = {
        "session": session,
        "page": page,
        "start": start,
        "earlier_from": max(0, start - PAGE_SIZE) if start > 0 else None,
        "entities": grouped_entities(session),
        "enrichment": enrichment_state(session),
        "deadline": recovery_deadline(session),
        "can_export": workspace.can(Role.MEMBER, session.team_id),
        "can_delete": workspace.can(Role.ADMIN, session.team_id),
        "can_pin": workspace.can(Role.MEMBER, session.team_id),
        "can_remove": workspace.can(Role.ADMIN, session.team_id),
        "size": size_breakdown(session),
        "export_formats": list(EXPORT_FORMATS),
        "memories": session_memories(workspace.access, session),
    }
    return render(request, "web/session/detail.html", context)


@team_required
def session_messages(request, public_id):
    """The next page of messages (htmx "load more"); a full page without htmx."""
    workspace = Workspace.of(request)
    session = workspace.session_or_404(public_id)
    after = _int(request.GET.get("after"), 0)
    if not is_htmx(request):
        return redirect(f"{reverse('web:session', args=[public_id])}?from={after + 1}")
    opened(session)
    page = load_page(session, after=after)
    context = {
        "session": session,
        "page": page,
        "can_pin": workspace.can(Role.MEMBER, session.team_id),
        "can_remove": workspace.can(Role.ADMIN, session.team_id),
    }
    return render(request, "web/session/_messages.html", context)


@team_required
@require_POST
def message_pin(request, public_id, seq):
    """Pin a message (compaction never changes it) or unpin it; back to it in the transcript."""
    session = session_with_role(request, public_id, Role.MEMBER)
    pinned = request.POST.get("pinned") == "true"
    try:
        set_pinned(session, seq, pinned)
        messages.success(request, f"Message #{seq} {'pinned' if pinned else 'unpinned'}.")
    except Message.DoesNotExist:
        raise Http404(f"No message #{seq} in this session.") from None
    except LifecycleConflict as exc:
        messages.info(request, str(exc))
    return redirect(f"{reverse('web:session', args=[public_id])}?at={seq}#m-{seq}")


@team_required
def session_similar(request, public_id):
    workspace = Workspace.of(request)
    session = workspace.session_or_404(public_id)
    access = workspace.access.narrowed(team_id=session.team_id)
    similar = similar_sessions(session, access, SIMILAR_SHOWN)
    template = "web/session/_similar.html" if is_htmx(request) else "web/session/similar.html"
    return render(
        request,
        template,
        {"session": session, "similar": [(s, round(sim * 100)) for s, sim in similar]},
    )


@team_required
def session_export(request, public_id):
    session = session_with_role(request, public_id, Role.MEMBER)
    try:
        response = export_response(
            session, request.GET.get("format"), access=Workspace.of(request).access
        )
    except UnknownExportFormat as exc:
        messages.error(
            request,
            f"Unknown export format {exc.format[:20]!r}; use one of {', '.join(EXPORT_FORMATS)}.",
        )
        return redirect("web:session", public_id=public_id)
    record_access([session.pk])
    return response


@session_action(Role.ADMIN)
def session_delete(request, session):
    if elsewhere := wrong_state_redirect(request, session, in_trash=False):
        return elsewhere
    form = DeleteForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        soft_delete(session, by=request.user, reason=form.cleaned_data["reason"])
        messages.success(
            request,
            f"Moved “{session.title or session.public_id}” and its "
            f"{session.message_count:,} messages to the trash. It can be restored until "
            f"{recovery_deadline(session):%Y-%m-%d}.",
        )
        return redirect("web:sessions")
    return render(
        request,
        "web/session/delete.html",
        {"session": session, "form": form, "trash_days": session.project.trash_days},
    )
