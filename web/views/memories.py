"""The memory pages: a project's memories (filters, search, open findings first), one
memory (its fields, evidence, relationships; edit, resolve, pin, delete), and the memories
card of a session page.

Every read goes through ``memories.retrieve.query.visible``: another team's memory, or a
deleted one, is a 404. Viewers read; members edit, resolve and pin; deleting asks what
deleting a session asks (an admin)."""

from __future__ import annotations

from collections import OrderedDict
from functools import wraps

from django.contrib import messages
from django.db.models import BigIntegerField, Case, F, Value, When, prefetch_related_objects
from django.db.models.functions import Cast
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from memories import visibility as memory_visibility
from memories.capture.edit import edit, set_pinned
from memories.capture.record import InvalidMemory, MemoryConflict, resolve
from memories.forget import trash
from memories.models import (
    LinkKind,
    Memory,
    MemoryEvidence,
    MemoryExtraction,
    MemoryLink,
    MemoryStatus,
    MemoryType,
    Resolution,
)
from memories.retrieve.query import MemoryFilters, apply, visible
from memories.retrieve.read_counts import note_access
from memories.retrieve.search import search_memories
from sessions.models import KEYWORD_VECTORS, Session
from sessions.visibility import VisibilityError
from teams.models import Role
from web.forms import VisibilityForm
from web.memory_details import readable_details
from web.memory_forms import (
    DEFAULT_SORT,
    SEARCH_LIMIT,
    MemoryDeleteForm,
    MemoryEditForm,
    MemoryListForm,
    ResolveForm,
)
from web.pagination import paginate_or_first
from web.scope import Workspace, team_required
from web.views import visibility as visibility_views
from web.views.sessions import with_workspace_project
from web.views.visibility import MEMORY_CHOICES, choices_for

EVIDENCE_SHOWN = 50
SESSION_MEMORIES_SHOWN = 30
HEAVY_COLUMNS = ("embedding", "search_vector")
# Keyset sorts (web/pagination.py): integer keys, so a float priority is kept to 6 digits.
# "Open findings first" lifts open findings above every other memory (priorities are 0..1).
PAGE_SORTS = {
    "open_first": ("Open findings first", "open_first_key", True),
    "priority": ("Priority", "priority_key", True),
    "newest": ("Newest first", "occurred_at", True),
    "oldest": ("Oldest first", "occurred_at", False),
}
# How a relationship reads from each end: source <out> target, target <in> source.
LINK_LABELS = {
    LinkKind.SUPERSEDES: ("Supersedes", "Superseded by"),
    LinkKind.RESOLVES: ("Resolves", "Resolved by"),
    LinkKind.LED_TO: ("Led to", "Came from"),
    LinkKind.INFLUENCED: ("Influenced", "Influenced by"),
    LinkKind.RELATES_TO: ("Relates to", "Related to"),
}


def _scaled(expression):
    return Cast(expression * Value(1_000_000.0), BigIntegerField())


def sort_keys(queryset):
    open_finding = Case(When(resolution=Resolution.OPEN, then=Value(2.0)), default=Value(0.0))
    return queryset.annotate(
        priority_key=_scaled(F("priority")),
        open_first_key=_scaled(F("priority") + open_finding),
    )


def _filters(data: dict, session: Session | None) -> MemoryFilters:
    status = data.get("status") or "active"
    return MemoryFilters(
        types=(data["type"],) if data.get("type") else (),
        agent=data.get("agent") or "",
        person=(data.get("person") or "").strip(),
        character=(data.get("character") or "").strip().lower(),
        session_id=session.pk if session is not None else None,
        status="" if status == "any" else status,
        resolution=data.get("resolution") or "",
        include_decayed=not data.get("hide_faded"),
    )


def _page_of(queryset, sort: str, cursor: str | None):
    """A page of ``queryset`` by ``sort``: the order is found over the few columns it needs
    (a narrow sort of every matching row), then only the page's rows are read in full."""
    keys = sort_keys(queryset.only("pk", "priority", "resolution", "occurred_at"))
    page, errors = paginate_or_first(keys, sort, cursor, sorts=PAGE_SORTS)
    full = (
        Memory.objects.select_related("project", "session")
        .defer(*HEAVY_COLUMNS, "session__metadata", "session__summary")
        .in_bulk([row.pk for row in page.rows])
    )
    page.rows = [full[row.pk] for row in page.rows if row.pk in full]
    return page, errors


@team_required
def memory_list(request):
    workspace = Workspace.of(request)
    form = MemoryListForm(with_workspace_project(request, workspace), projects=workspace.projects)
    page, hits, errors, session = None, None, [], None
    data = form.cleaned_data if form.is_valid() else {}
    access = workspace.narrowed(data.get("project"))
    if data.get("session"):
        session = access.scope(Session.objects.alive()).filter(public_id=data["session"]).first()
        if session is None:
            form.add_error(None, "No such session in this project.")
    if form.is_valid():
        filters = _filters(data, session)
        if data.get("q", "").strip():
            hits = search_memories(access, data["q"], filters, SEARCH_LIMIT)
            prefetch_related_objects([hit.memory for hit in hits], "session", "project")
        else:
            page, errors = _page_of(
                apply(visible(access), filters),
                data.get("sort") or DEFAULT_SORT,
                request.GET.get("cursor"),
            )
    return render(
        request,
        "web/memories/list.html",
        {
            "form": form,
            "page": page,
            "hits": hits,
            "errors": errors,
            "session": session,
            "project_id": data.get("project"),
            "show_project": not data.get("project") and len(workspace.projects) > 1,
            "can_export": workspace.can(Role.MEMBER),
            "can_delete": workspace.can(Role.ADMIN),
        },
    )


# --- one memory ---------------------------------------------------------------------------


def memory_or_404(workspace: Workspace, project_id: int, public_id: str) -> Memory:
    memory = (
        visible(workspace.access)
        .select_related("project", "session", "created_by", "stale_session", "owner")
        .defer(*HEAVY_COLUMNS)
        .filter(project_id=project_id, public_id=public_id)
        .first()
    )
    if memory is None:
        raise Http404("No such memory.")
    return memory


def deleted_memory(workspace: Workspace, project_id: int, public_id: str) -> Memory | None:
    """The caller's memory ``public_id`` if it was deleted (to say so rather than 404)."""
    return (
        workspace.access.scope(Memory.objects.filter(status=MemoryStatus.DELETED))
        .filter(project_id=project_id, public_id=public_id)
        .only("public_id", "deleted_at", "team_id", "project_id")
        .first()
    )


def memory_url(memory: Memory) -> str:
    return reverse("web:memory", args=[memory.project_id, memory.public_id])


def evidence_of(memory: Memory, access) -> list[MemoryEvidence]:
    """The messages it came from, in sessions the caller sees that are not in the trash."""
    return list(
        access.scope(MemoryEvidence.objects.filter(memory=memory), "session__project_id")
        .filter(session__deleted_at__isnull=True)
        .select_related("message", "session")
        .defer(
            *(f"message__{column}" for column in KEYWORD_VECTORS),
            "session__metadata",
        )
        .order_by("session__started_at", "message__seq")[:EVIDENCE_SHOWN]
    )


def related_of(memory: Memory, access) -> OrderedDict:
    """Its relationships from both ends, by how they read ("Supersedes", "Resolved by"),
    to memories the caller sees."""
    seen = visible(access)
    groups: OrderedDict = OrderedDict()
    outgoing = (
        MemoryLink.objects.filter(source=memory, target__in=seen.values("pk"))
        .select_related("target")
        .defer(*(f"target__{c}" for c in HEAVY_COLUMNS))
    )
    incoming = (
        MemoryLink.objects.filter(target=memory, source__in=seen.values("pk"))
        .select_related("source")
        .defer(*(f"source__{c}" for c in HEAVY_COLUMNS))
    )
    for link in outgoing:
        groups.setdefault(LINK_LABELS[link.kind][0], []).append(link.target)
    for link in incoming:
        groups.setdefault(LINK_LABELS[link.kind][1], []).append(link.source)
    return groups


@team_required
def memory_detail(request, project_id, public_id):
    workspace = Workspace.of(request)
    memory = memory_or_404(workspace, project_id, public_id)
    note_access([memory.pk])
    memory.refresh_from_db(fields=["access_count", "last_accessed_at", "priority"])
    can_edit = workspace.can(Role.MEMBER, memory.team_id)
    choices = choices_for(workspace.access, memory, MEMORY_CHOICES, noun="memory")
    context = {
        "memory": memory,
        "owns": workspace.access.owns(memory),
        "visibility_form": (
            VisibilityForm(choices=choices, initial={"visibility": memory.visibility})
            if choices
            else None
        ),
        "details": readable_details(memory),
        "evidence": evidence_of(memory, workspace.access),
        "related": related_of(memory, workspace.access),
        "can_edit": can_edit,
        "can_delete": workspace.can(Role.ADMIN, memory.team_id),
        "can_resolve": can_edit
        and memory.type == MemoryType.FINDING
        and memory.resolution != Resolution.RESOLVED,
        "resolve_form": ResolveForm(),
        "history": list(memory.history.select_related("by", "related").order_by("at", "id")),
    }
    return render(request, "web/memories/detail.html", context)


def memory_action(role: str, methods: tuple[str, ...] = ("POST",)):
    """A page that acts on one memory: signed in with a team, ``methods`` only; the view
    gets the memory (of the caller's teams, else 404) when the caller holds ``role`` in its
    team (else 403). A memory deleted meanwhile, or in the wrong state for the action
    (resolved already), is a message on the page it is now on, never an error page."""

    def decorate(view):
        @team_required
        @require_http_methods(list(methods))
        @wraps(view)
        def wrapped(request, project_id, public_id):
            workspace = Workspace.of(request)
            if gone := deleted_memory(workspace, project_id, public_id):
                workspace.require(role, gone.team_id)
                messages.info(
                    request, f"{gone.public_id} was deleted on {gone.deleted_at:%Y-%m-%d %H:%M}."
                )
                return redirect("web:memories")
            memory = memory_or_404(workspace, project_id, public_id)
            workspace.require(role, memory.team_id)
            try:
                return view(request, memory)
            except (MemoryConflict, InvalidMemory) as exc:
                messages.info(request, str(exc))
                return redirect(memory_url(memory))

        return wrapped

    return decorate


@memory_action(Role.MEMBER, ("GET", "POST"))
def memory_edit(request, memory):
    form = MemoryEditForm(request.POST if request.method == "POST" else None, memory=memory)
    if request.method == "POST" and form.is_valid():
        try:
            edit(memory, **form.cleaned_data)
        except InvalidMemory as exc:
            form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        else:
            messages.success(request, f"Saved {memory.public_id}.")
            return redirect(memory_url(memory))
    return render(
        request,
        "web/memories/edit.html",
        {"memory": memory, "form": form, "cancel": memory_url(memory)},
    )


@memory_action(Role.MEMBER)
def memory_resolve(request, memory):
    form = ResolveForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Say what was done to resolve it (Action taken).")
        return redirect(memory_url(memory))
    # Of two people resolving at once, the second is told (resolve locks the row).
    resolve(
        memory,
        by=request.user.get_username(),
        action_taken=form.cleaned_data["action_taken"],
        verification=form.cleaned_data["verification"],
    )
    messages.success(request, f"Resolved {memory.public_id}.")
    return redirect(memory_url(memory))


@memory_action(Role.MEMBER)
def memory_pin(request, memory):
    pinned = request.POST.get("pinned") == "true"
    set_pinned(memory, pinned)
    messages.success(
        request,
        f"Pinned {memory.public_id}: it keeps its priority."
        if pinned
        else f"Unpinned {memory.public_id}: it fades again when it is not read.",
    )
    return redirect(memory_url(memory))


@memory_action(Role.ADMIN, ("GET", "POST"))
def memory_delete(request, memory):
    form = MemoryDeleteForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        trash.delete(memory, by=request.user, reason=form.cleaned_data["reason"])
        messages.success(
            request,
            f"Deleted {memory.public_id}: it no longer appears in lists, search or agents' "
            "context.",
        )
        return redirect("web:memories")
    return render(
        request,
        "web/memories/delete.html",
        {"memory": memory, "form": form, "cancel": memory_url(memory)},
    )


# --- a session's memories -----------------------------------------------------------------


def session_memories(access, session: Session) -> dict:
    """The memories of ``session`` for its page (open findings first, then by priority;
    faded ones too), how many there are, and where extraction is."""
    rows = sort_keys(visible(access).filter(session=session).defer(*HEAVY_COLUMNS)).order_by(
        "-open_first_key", "-pk"
    )
    shown = list(rows[: SESSION_MEMORIES_SHOWN + 1])
    return {
        "rows": shown[:SESSION_MEMORIES_SHOWN],
        "more": len(shown) > SESSION_MEMORIES_SHOWN,
        "extraction": MemoryExtraction.objects.filter(session=session).first(),
    }


@team_required
@require_POST
def memory_visibility_view(request, project_id, public_id):
    """The control on a memory's page: its owner shares it or takes it back, an admin of the
    team makes it less visible (``memories.visibility.change``, as the API does)."""
    workspace = Workspace.of(request)
    memory = memory_or_404(workspace, project_id, public_id)
    wanted = request.POST.get("visibility", "")
    try:
        changed = memory_visibility.change(workspace.access, memory, wanted)
    except VisibilityError as refusal:
        messages.error(request, f"Visibility not changed: {refusal}.")
    else:
        if changed:
            messages.success(request, visibility_views.MEMORY_BECAME[wanted])
        else:
            messages.info(request, visibility_views.changed_message(wanted, 0, 1))
    # An admin who made it private no longer reads it: the list, then.
    if not visible(workspace.access).filter(pk=memory.pk).exists():
        return redirect("web:memories")
    return redirect(memory_url(memory))
