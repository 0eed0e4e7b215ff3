"""One session: the transcript (paged by seq), its enrichment, export, similar sessions,
delete (a confirmation page first), and who reads it (its owner and visibility).

The page shows as much as the caller reads (docs/visibility.md): all of it; a teammate's
'summary' session without its messages, entities or similar sessions; a teammate's private
session, to an admin, only that it exists (its title, owner, dates, size and lifecycle) with
what an admin does to it (delete, restore, purge, make it less visible)."""

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
from teams.access import Reading
from teams.models import Role
from web.forms import DeleteForm, VisibilityForm
from web.scope import Workspace, team_required
from web.transcript import PAGE_SIZE, load_page
from web.views.memories import session_memories
from web.views.util import is_htmx, session_action, session_with_role, wrong_state_redirect
from web.views.visibility import CHOICES as VISIBILITY_LABELS
from web.views.visibility import choices_for

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


def content_context(session, start: int) -> dict:
    """What only a caller who reads the session's content sees: its messages (a page from
    ``start``), its entities."""
    page = load_page(session, after=start - 1)
    return {
        "page": page,
        "start": start,
        "earlier_from": max(0, start - PAGE_SIZE) if start > 0 else None,
        "entities": grouped_entities(session),
    }


def visibility_form(session, choices) -> VisibilityForm | None:
    """The control of who reads it, for a person who may change that (None: nobody here)."""
    if not choices:
        return None
    return VisibilityForm(choices=choices, initial={"visibility": session.visibility})


@team_required
def session_detail(request, public_id):
    workspace = Workspace.of(request)
    session = workspace.session_or_404(public_id, reading=Reading.LISTED)
    reading = workspace.access.reading(session)
    reads_content = reading == Reading.CONTENT
    # A read of its content keeps it; an admin's look at a session it does not read does not.
    if reads_content and opened(session):
        messages.info(
            request,
            "This session was archived; it is restored. Search by meaning finds its "
            "messages again once they are embedded, in a moment.",
        )
    start = _int(request.GET.get("from"))
    at = _int(request.GET.get("at"))
    if at is not None and start is None:
        start = max(0, at - CONTEXT_BEFORE)
    choices = choices_for(workspace.access, session, VISIBILITY_LABELS)
    is_admin = workspace.can(Role.ADMIN, session.team_id)
    context = {
        "session": session,
        "reading": str(reading),
        "owns": workspace.access.owns(session),
        "visibility_form": visibility_form(session, choices),
        "enrichment": enrichment_state(session),
        "deadline": recovery_deadline(session),
        "can_export": reads_content and workspace.can(Role.MEMBER, session.team_id),
        "can_anonymize": reads_content and is_admin,
        "can_delete": is_admin,
        "can_pin": workspace.can(Role.MEMBER, session.team_id),
        "can_remove": is_admin,
        "size": size_breakdown(session),
        "export_formats": list(EXPORT_FORMATS),
        # Accepted memories of a 'summary' session are the team's too (Access.scope decides).
        "memories": session_memories(workspace.access, session)
        if reading != Reading.LISTED
        else None,
    }
    if reads_content:
        context.update(content_context(session, start or 0))
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
    session = workspace.session_or_404(public_id)  # its content: a summary's would tell
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


@session_action(Role.ADMIN, reading=Reading.LISTED)
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
