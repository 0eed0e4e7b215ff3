"""The memories REST API: record, list and search, read, edit, delete and restore, resolve a
finding, relate memories, what relates to one, topics, timeline, and agent states.

``{id}`` is a memory's readable id (``DEC-001``), unique per project: it is looked up in the
caller's project (an API token's), or in the project a person names with ``?project=``;
its number (``pk``) works too. Another team's memory is a 404 everywhere. The domain's
errors (``InvalidMemory`` → 400 naming the field, ``MemoryConflict`` → 409) are answered by
``core.api_errors``.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Prefetch
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework import exceptions, status
from rest_framework.decorators import action
from rest_framework.response import Response

from core.openapi import AutoSchema, error
from memories import visibility as audience
from memories.api.pagination import MemoryCursorPagination
from memories.api.serializers import (
    INPUT_BY_TYPE,
    NOT_EDITABLE,
    SORTS,
    AcceptSerializer,
    AgentStateInSerializer,
    AgentStateParamsSerializer,
    AggregateParamsSerializer,
    BulkReviewSerializer,
    LinkRequestSerializer,
    LinkSerializer,
    MemoryDetailSerializer,
    MemoryListParamsSerializer,
    MemoryPatchSerializer,
    MemorySerializer,
    ReasonSerializer,
    RecordedSerializer,
    RelatedSerializer,
    ResolveSerializer,
    RevertSerializer,
    ReviewedSerializer,
    TimelineSerializer,
    TopicsSerializer,
    VisibilitySerializer,
    input_for,
)
from memories.api.trash import TrashActions
from memories.capture import record as capture
from memories.capture import review as reviewing
from memories.capture.edit import EDITABLE_COLUMNS, edit, unlink
from memories.forget import trash
from memories.models import (
    LinkKind,
    Memory,
    MemoryEvidence,
    MemoryScope,
    MemoryStatus,
    MemoryType,
    Origin,
)
from memories.retrieve.aggregate import timeline, topics
from memories.retrieve.query import apply, visible
from memories.retrieve.read_counts import record_access
from memories.retrieve.related import related
from memories.retrieve.search import search_memories
from search.api.views import InvalidQuery
from sessions.api.parsers import JSONParser
from sessions.models import Message, Session
from teams.access import Access, Reading
from teams.models import Role
from teams.viewsets import ScopedAPIView, ScopedViewSet

MAX_PK = 2**63 - 1
MAX_SEARCH_RESULTS = 100
MAX_RELATED = 50

PROJECT_PARAMETER = OpenApiParameter(
    "project",
    OpenApiTypes.STR,
    description="'team/project' or id: the project whose memory {id} is (people with several "
    "projects; an API token looks in its own)",
)


ID_PARAMETER = OpenApiParameter(
    "id",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description="the memory's readable id (DEC-001), or its number",
)
DETAIL_PARAMETERS = [ID_PARAMETER, PROJECT_PARAMETER]


class MemoryNotFound(exceptions.NotFound):
    default_detail = "No such memory in your projects."


def not_found(reference: str, field: str | None = None) -> MemoryNotFound:
    detail = f"No memory {reference!r} in your projects."
    return MemoryNotFound({"detail": detail, "field": field} if field else detail)


def find_memory(memories, reference, *, prefer_project_id=None, field=None) -> Memory:
    """One of ``memories`` (a scoped queryset) by its readable id or its number. A readable
    id found in several projects is the one of ``prefer_project_id`` if any, else a 400
    asking to name the project."""
    reference = str(reference).strip()
    if not reference or "\x00" in reference:
        raise not_found(reference, field)
    if reference.isdigit():
        if int(reference) > MAX_PK:
            raise not_found(reference, field)
        rows = list(memories.filter(pk=int(reference)))
    else:
        rows = list(memories.filter(public_id=reference.upper())[:10])
    preferred = [m for m in rows if m.project_id == prefer_project_id]
    rows = preferred or rows
    if not rows:
        raise not_found(reference, field)
    if len(rows) > 1:
        where = ", ".join(f"{m.project.team.slug}/{m.project.slug}" for m in rows)
        raise exceptions.ValidationError(
            {
                field or "project": [
                    f"{reference} is in several of your projects ({where}): name the project "
                    "with ?project=team/project, or use the memory's number"
                ]
            }
        )
    return rows[0]


def request_data(request) -> dict:
    """The JSON body, or an empty object when none was sent (the review actions' body is
    optional)."""
    return request.data if request.body else {}


def json_object(data) -> dict:
    if not isinstance(data, dict):
        raise exceptions.ValidationError({"detail": "send a JSON object"})
    return data


def with_listing(queryset, access: Access):
    # Evidence in a session in the trash is hidden with it (and back on restore), as the
    # page shows it (web/views/memories.py ``evidence_of``); so is evidence in a session
    # ``access`` does not read (a memory its owner shared out of a private session).
    shown = (
        MemoryEvidence.objects.filter(session__deleted_at__isnull=True)
        .filter(access.readable(MemoryEvidence))
        .select_related("message", "session")
    )
    return queryset.select_related(
        "project__team", "session", "created_by", "stale_session", "owner"
    ).prefetch_related(Prefetch("evidence", queryset=shown))


RECORD_REQUEST = PolymorphicProxySerializer(
    component_name="MemoryIn",
    serializers={str(kind): serializer for kind, serializer in INPUT_BY_TYPE.items()},
    resource_type_field_name="type",
)


class MemorySchema(AutoSchema):
    """Recording takes a body of one of the types (a oneOf, which drf-spectacular does not
    mark required by itself): the body is required."""

    def get_operation(self, *args, **kwargs):
        operation = super().get_operation(*args, **kwargs)
        if operation and "requestBody" in operation and self.view.action == "create":
            operation["requestBody"]["required"] = True
        return operation


class MemoryScopedMixin:
    """Lookups shared by the memory views: the caller's memories, sessions, params."""

    def memories(self, *, include_deleted: bool = False):
        return with_listing(visible(self.access, include_deleted=include_deleted), self.access)

    def get_memory(self) -> Memory:
        project = self.request.query_params.get("project")
        memories = self.memories(include_deleted=True)
        prefer = self.access.token.project_id if self.access.is_agent else None
        if project:
            memories = memories.filter(project=self.resolve_project(project, role=Role.VIEWER))
        return find_memory(memories, self.kwargs["id"], prefer_project_id=prefer)

    def detailed(self, memory: Memory) -> dict:
        """``memory`` with its links to the memories the caller reads."""
        return MemoryDetailSerializer(memory, context={"access": self.access}).data

    def as_changed(self, memory: Memory) -> Memory:
        """``memory`` (which the caller read) as it is after the caller's change: an admin
        who made it private no longer reads it, yet gets the answer to the change."""
        changed = Memory.objects.filter(pk=memory.pk)
        return with_listing(changed, self.access).get()

    def find_session(
        self, reference: str, *, field: str = "session", reading=Reading.CONTENT
    ) -> Session:
        """A session the caller reads at ``reading``: its content to record a memory of it,
        its summary to list the memories of it (a 'summary' session's accepted ones)."""
        session = (
            self.access.scope(
                Session.objects.select_related("project", "project__team"), reading=reading
            )
            .filter(public_id=reference)
            .first()
        )
        if session is None:
            raise exceptions.ValidationError(
                {field: [f"no session {reference!r} in your projects"]}
            )
        return session

    def project_for(self, session: Session | None, reference: str | None):
        """The project a write goes to: a person's write about a session goes to the
        session's project unless they name one; else ``resolve_project``."""
        if session is not None and not reference and not self.access.is_agent:
            self.require(Role.MEMBER, session.project.team_id)
            return session.project
        return self.resolve_project(reference)

    def read_query(self, serializer_class, data, extra=()):
        """Query parameters: unknown names and wrong values are a 400 naming them."""
        known = set(serializer_class().fields) | set(extra)
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidQuery(
                {
                    "detail": f"unknown parameter(s): {', '.join(unknown)}; "
                    f"known: {', '.join(sorted(known))}"
                }
            )
        params = serializer_class(data=data)
        if not params.is_valid():
            raise InvalidQuery(params.errors)
        return params

    def filtered(self, params):
        """The caller's live memories narrowed by ``params`` (a MemoryFiltersSerializer)."""
        # The project named, or the working directory's (the header), as every read does.
        access = self.read_access(params.validated_data.get("project"))
        session_id = None
        if params.validated_data.get("session"):
            try:
                session_id = self.find_session(
                    params.validated_data["session"], reading=Reading.SUMMARY
                ).pk
            except exceptions.ValidationError as exc:
                raise InvalidQuery(exc.detail) from None
        filters = params.filters(session_id)
        return access, filters, apply(visible(access), filters)


class MemoryViewSet(TrashActions, MemoryScopedMixin, ScopedViewSet):
    """Memories of the caller's projects (and those its team shares)."""

    parser_classes = [JSONParser]
    lookup_url_kwarg = "id"
    serializer_class = MemorySerializer
    pagination_class = MemoryCursorPagination
    schema = MemorySchema()
    sort = "-priority"

    @extend_schema(
        parameters=[MemoryListParamsSerializer],
        responses=MemorySerializer(many=True),
        description="The memories of your projects, most important first (sort= for another "
        "order), paginated by cursor. Decayed memories (priority below 0.3) are left out "
        "unless include_decayed or min_priority. With q, a search by meaning and keyword: "
        "one page of the best matches with their relevance; the hits count as reads of "
        "those memories (a plain list does not).",
    )
    def list(self, request):
        params = self.read_query(
            MemoryListParamsSerializer, request.query_params, extra=("cursor", "limit")
        )
        access, filters, memories = self.filtered(params)
        paginator = self.paginator
        query = params.validated_data.get("q", "").strip()
        if query:
            limit = min(paginator.get_page_size(request), MAX_SEARCH_RESULTS)
            hits = search_memories(
                access,
                query,
                filters,
                limit,
                min_relevance=params.validated_data["min_relevance"],
            )
            found = list(
                with_listing(Memory.objects.filter(pk__in=[h.memory.pk for h in hits]), access)
            )
            by_pk = {memory.pk: memory for memory in found}
            ranked = []
            for hit in hits:
                memory = by_pk[hit.memory.pk]
                memory.relevance = round(hit.relevance, 4)
                ranked.append(memory)
            record_access(ranked)
            results = MemorySerializer(ranked, many=True, context={"access": access}).data
            return Response({"next": None, "previous": None, "results": results})
        self.sort = params.validated_data["sort"]
        page = paginator.paginate_queryset(with_listing(memories, access), request, view=self)
        return paginator.get_paginated_response(
            MemorySerializer(page, many=True, context={"access": access}).data
        )

    def aggregated(self, request):
        """The memories an aggregation is over, and the ``limit`` asked for (or None)."""
        params = self.read_query(AggregateParamsSerializer, request.query_params)
        _, _, memories = self.filtered(params)
        return memories, params.validated_data.get("limit")

    def ordering(self) -> tuple[str, ...]:
        return SORTS[self.sort]

    def get_queryset(self):
        """The caller's live memories, as every memory view reads them (``visible``, through
        ``Access.scope``), for what asks a generic view for its queryset (the schema)."""
        return self.memories()

    @extend_schema(
        request=RECORD_REQUEST,
        responses={
            201: RecordedSerializer,
            200: OpenApiResponse(
                RecordedSerializer, description="merged into the memory it restates"
            ),
            404: error(404),
            409: error(409),
        },
        description="Record a memory: its type, its content, the type's own fields (a "
        "decision's rationale and alternatives_considered, a finding's severity, category, "
        "location, impact and root_cause, a preference's category, confidence and "
        "applies_to…), and optionally the session and message numbers it came from, the "
        "memories it supersedes and relationships to others. Answers 201 with the new "
        "memory, or 200 with the existing one it restates (outcome 'merged'). A memory it "
        "contradicts (same type and topic, or the opposite statement) is superseded and "
        "listed in 'superseded'. An unknown type or field is a 400 naming it; a memory "
        "named in supersedes, links or resolved_by that is not yours is a 404 naming the "
        "field; a cycle of supersedes is a 409. Nothing is written when any part is refused.",
    )
    def create(self, request):
        data = json_object(request.data)
        payload = input_for(data.get("type"))(data=data)
        payload.is_valid(raise_exception=True)
        values = payload.validated_data
        session = self.find_session(values["session"]) if values.get("session") else None
        project = self.project_for(session, values.get("project"))
        ownership = audience.for_record(self.access, project, values.get("visibility"), session)
        draft = capture.MemoryDraft(
            type=values["type"],
            content=values["content"],
            session=session,
            details=payload.own_fields(values),
            topic=values.get("topic", ""),
            tags=values.get("tags", []),
            confidence=values.get("confidence", ""),
            severity=values.get("severity", ""),
            agent=values.get("agent", ""),
            person=values.get("person", ""),
            shared=values.get("shared", False),
            scope=values.get("scope", MemoryScope.PROJECT),
            origin=Origin.AGENT if self.access.is_agent else Origin.PERSON,
            created_by=None if self.access.is_agent else request.user,
            occurred_at=values.get("occurred_at"),
            evidence=self.evidence(session, values.get("evidence", [])),
            pinned=values.get("pinned", False),
            owner_id=ownership.owner_id,
            visibility=ownership.visibility,
        )
        others = visible(self.access)
        draft.supersedes = [
            find_memory(others, ref, prefer_project_id=project.pk, field="supersedes")
            for ref in values.get("supersedes", [])
        ]
        links = [
            (
                item["kind"],
                find_memory(others, item["target"], prefer_project_id=project.pk, field="links"),
            )
            for item in values.get("links", [])
        ]
        with transaction.atomic():  # the memory and its links, or nothing
            recorded = capture.record(project, draft)
            for kind, target in links:
                capture.link(recorded.memory, target, kind)
        memory = with_listing(Memory.objects.filter(pk=recorded.memory.pk), self.access).get()
        memory.outcome = recorded.outcome
        memory.superseded = [old.public_id for old in recorded.superseded]
        created = recorded.outcome == "created"
        return Response(
            RecordedSerializer(memory, context={"access": self.access}).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @staticmethod
    def evidence(session: Session | None, seqs: list[int]) -> list[capture.Evidence]:
        if not seqs:
            return []
        if session is None:
            raise exceptions.ValidationError(
                {"evidence": ["name the session its messages are in ('session')"]}
            )
        messages = Message.objects.filter(session=session, seq__in=seqs, removed_at__isnull=True)
        found = {message.seq: message for message in messages}
        missing = sorted(set(seqs) - set(found))
        if missing:
            raise exceptions.ValidationError(
                {
                    "evidence": [
                        f"session {session.public_id} has no message "
                        f"{', '.join(f'#{seq}' for seq in missing)}"
                    ]
                }
            )
        return [capture.Evidence(found[seq]) for seq in dict.fromkeys(seqs)]

    @extend_schema(
        parameters=DETAIL_PARAMETERS,
        responses={200: MemoryDetailSerializer, 400: error(400)},
    )
    def retrieve(self, request, id=None):
        """A memory with its evidence and relationships. Reading it counts as an access
        (its priority rises). A deleted memory is shown with its status, reason and
        time, and can be restored."""
        memory = self.get_memory()
        if memory.status != MemoryStatus.DELETED:
            record_access([memory])
        return Response(self.detailed(memory))

    @extend_schema(
        parameters=DETAIL_PARAMETERS,
        request=MemoryPatchSerializer,
        responses={200: MemoryDetailSerializer, 409: error(409)},
    )
    def partial_update(self, request, id=None):
        """Edit a memory: content, topic, tags, agent, confidence, pinned, and its
        type's own fields (merged into them; null removes one). Another type's field, or
        one that cannot change (type, session, evidence, scope: record a new memory
        instead), is a 400 naming it. 409 when the memory is deleted."""
        memory = self.get_memory()
        data = dict(json_object(request.data))
        if set(data) - {"visibility"}:
            # Its visibility alone is its owner's (or, lower, an admin's) to change.
            self.require(Role.MEMBER, memory.team_id)
        fixed = sorted(name for name in data if name in NOT_EDITABLE)
        if fixed:
            raise exceptions.ValidationError(
                {name: ["cannot be changed; record a new memory instead"] for name in fixed}
            )
        serializer_class = input_for(memory.type) if memory.type in INPUT_BY_TYPE else None
        if serializer_class is None:
            raise capture.MemoryConflict(
                "An agent state is changed with PUT /api/v1/agent-states/{agent}."
            )
        removed = {
            name: None
            for name in serializer_class.detail_fields
            if name in data and data[name] is None
        }
        payload = serializer_class(
            data={k: v for k, v in data.items() if k not in removed}, partial=True
        )
        payload.is_valid(raise_exception=True)
        values = payload.validated_data
        columns = {name: values[name] for name in EDITABLE_COLUMNS if name in values}
        details = {**payload.own_fields(values), **removed}
        with transaction.atomic():  # a refused visibility changes nothing else either
            if "visibility" in values:
                audience.change(self.access, memory, values["visibility"])
            if columns or details:
                edit(memory, columns, details)
        return Response(self.detailed(self.as_changed(memory)))

    @extend_schema(
        parameters=[
            *DETAIL_PARAMETERS,
            OpenApiParameter(
                "reason", OpenApiTypes.STR, required=True, description="why (kept with it)"
            ),
        ],
        responses={204: None, 409: error(409)},
    )
    def destroy(self, request, id=None):
        """Delete a memory: it moves to the trash (GET /api/v1/memories/trash), with the
        reason and a deletion record, restorable for the project's trash days, then purged.
        409 when it is already deleted. Admins, or an API token with the delete
        permission."""
        memory = self.get_memory()
        self.require(Role.ADMIN, memory.team_id)
        trash.delete(memory, by=request.user, reason=request.query_params.get("reason", ""))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        parameters=DETAIL_PARAMETERS,
        request=None,
        responses={200: MemoryDetailSerializer, 409: error(409)},
    )
    @action(detail=True, methods=["post"])
    def restore(self, request, id=None):
        """Bring a deleted memory back (superseded again if a newer memory still
        replaces it) before its recovery_deadline. 409 when it is not deleted, or when the
        deadline has passed (code MEM_E007, with recovery_deadline). Admins, or a token
        with delete."""
        memory = self.get_memory()
        self.require(Role.ADMIN, memory.team_id)
        trash.restore(memory, by=request.user)
        return Response(self.detailed(self.get_memory()))

    @extend_schema(
        parameters=DETAIL_PARAMETERS,
        request=ResolveSerializer,
        responses={200: MemoryDetailSerializer, 409: error(409)},
    )
    @action(detail=True, methods=["post"])
    def resolve(self, request, id=None):
        """Mark an open finding resolved, with what was done and how it was verified;
        resolved_by links the memory that resolves it. 400 (naming type) for a memory
        that is not a finding; 409 when it is already resolved or deleted."""
        memory = self.get_memory()
        self.require(Role.MEMBER, memory.team_id)
        payload = ResolveSerializer(data=json_object(request.data))
        payload.is_valid(raise_exception=True)
        values = payload.validated_data
        resolver = None
        if values.get("resolved_by"):
            resolver = find_memory(
                visible(self.access),
                values["resolved_by"],
                prefer_project_id=memory.project_id,
                field="resolved_by",
            )
        capture.resolve(
            memory,
            by=values.get("by") or request.user.get_username(),
            action_taken=values.get("action_taken", ""),
            verification=values.get("verification", ""),
            resolved_by=resolver,
        )
        return Response(self.detailed(self.get_memory()))

    def _reviewed(self, change, serializer_class=ReasonSerializer, role=Role.MEMBER):
        memory = self.get_memory()
        self.require(role, memory.team_id)
        payload = serializer_class(data=json_object(request_data(self.request)))
        payload.is_valid(raise_exception=True)
        change(memory, by=self.request.user, **payload.validated_data)
        return Response(self.detailed(self.get_memory()))

    @extend_schema(
        parameters=DETAIL_PARAMETERS,
        request=AcceptSerializer,
        responses={200: MemoryDetailSerializer, 400: error(400), 409: error(409)},
    )
    @action(detail=True, methods=["post"])
    def accept(self, request, id=None):
        """Accept a proposed memory (or a rejected or reverted one): it becomes active, is
        used by search and context, and supersedes the active memories it contradicts.
        With content, the statement is edited first (1 to 4000 characters, else a 400
        naming content). Accepting an active memory changes nothing. 409 when it is
        superseded (superseded_by names the newer memory) or deleted."""
        return self._reviewed(reviewing.accept, AcceptSerializer)

    @extend_schema(
        parameters=DETAIL_PARAMETERS,
        request=ReasonSerializer,
        responses={200: MemoryDetailSerializer, 409: error(409)},
    )
    @action(detail=True, methods=["post"])
    def reject(self, request, id=None):
        """Reject a memory: it is kept as a rejection (listed with status=rejected), not
        used, and the same statement (same words, or nearly the same meaning) found again
        by the extractor or an import is not proposed again. 409 when it is deleted."""
        return self._reviewed(reviewing.reject)

    @extend_schema(
        parameters=DETAIL_PARAMETERS,
        request=ReasonSerializer,
        responses={200: MemoryDetailSerializer, 409: error(409)},
    )
    @action(detail=True, methods=["post"])
    def unreject(self, request, id=None):
        """Undo a rejection: the memory is proposed again, back in the review queue. 409
        when it is not rejected."""
        return self._reviewed(reviewing.unreject)

    @extend_schema(
        parameters=DETAIL_PARAMETERS,
        request=ReasonSerializer,
        responses={200: MemoryDetailSerializer, 409: error(409)},
    )
    @action(detail=True, methods=["post"])
    def confirm(self, request, id=None):
        """Confirm a memory flagged may be stale (a later session edited its files): it still
        holds, and the flag clears. 409 when it is not flagged."""
        return self._reviewed(reviewing.confirm)

    @extend_schema(
        parameters=DETAIL_PARAMETERS,
        request=RevertSerializer,
        responses={200: MemoryDetailSerializer, 400: error(400), 409: error(409)},
    )
    @action(detail=True, methods=["post"])
    def revert(self, request, id=None):
        """Withdraw an active memory (a decision undone), saying why; it stays as history
        with status reverted. 400 naming reason without one; 409 unless it is active."""
        return self._reviewed(reviewing.revert, RevertSerializer)

    @extend_schema(
        parameters=DETAIL_PARAMETERS,
        request=ReasonSerializer,
        responses={200: MemoryDetailSerializer, 400: error(400), 409: error(409)},
    )
    @action(detail=True, methods=["post"])
    def reopen(self, request, id=None):
        """Open a resolved finding again. 400 (naming type) for a memory that is not a
        finding; 409 when it is open."""
        return self._reviewed(reviewing.reopen)

    @extend_schema(
        parameters=DETAIL_PARAMETERS,
        request=VisibilitySerializer,
        responses={200: MemoryDetailSerializer, 400: error(400), 403: error(403)},
    )
    @action(detail=True, methods=["post"], url_path="visibility")
    def set_visibility(self, request, id=None):
        """Who reads the memory: 'private' (its owner), 'summary' (the team, once accepted)
        or 'team'. Its owner shares it or takes it back; an admin of the team may only make
        it less visible (403 otherwise, and for anyone else). An unknown visibility, one
        its project does not allow, or 'private' for a memory with no owner is a 400 naming
        visibility. The same as PATCH with visibility."""
        memory = self.get_memory()
        payload = VisibilitySerializer(data=json_object(request_data(request)))
        payload.is_valid(raise_exception=True)
        audience.change(self.access, memory, payload.validated_data["visibility"])
        return Response(self.detailed(self.as_changed(memory)))

    @extend_schema(
        request=BulkReviewSerializer,
        responses={200: ReviewedSerializer, 400: error(400), 404: error(404), 409: error(409)},
        description="Accept and reject many memories at once (the review queue: GET "
        "/api/v1/memories?status=proposed), all or nothing: a memory that is not yours is a "
        "404 naming the field (accept or reject), a superseded or deleted one a 409, and "
        "then nothing changes.",
    )
    @action(detail=False, methods=["post"], url_path="review", pagination_class=None)
    def review(self, request):
        payload = BulkReviewSerializer(data=json_object(request.data))
        payload.is_valid(raise_exception=True)
        values = payload.validated_data
        memories = self.memories(include_deleted=True)
        if values.get("project"):
            memories = memories.filter(
                project=self.resolve_project(values["project"], role=Role.VIEWER)
            )
        prefer = self.access.token.project_id if self.access.is_agent else None
        chosen = {
            name: [
                find_memory(memories, ref, prefer_project_id=prefer, field=name)
                for ref in values.get(name, [])
            ]
            for name in ("accept", "reject")
        }
        for memory in [*chosen["accept"], *chosen["reject"]]:
            self.require(Role.MEMBER, memory.team_id)
        reason = values.get("reason", "")
        with transaction.atomic():
            for memory in chosen["accept"]:
                reviewing.accept(memory, by=request.user, reason=reason)
            for memory in chosen["reject"]:
                reviewing.reject(memory, by=request.user, reason=reason)
        return Response(
            ReviewedSerializer(
                {
                    "accepted": [m.public_id for m in chosen["accept"]],
                    "rejected": [m.public_id for m in chosen["reject"]],
                }
            ).data
        )

    @extend_schema(
        methods=["POST"],
        parameters=DETAIL_PARAMETERS,
        request=LinkRequestSerializer,
        responses={201: LinkSerializer, 409: error(409)},
        description="Relate this memory to another: it resolves, led_to, influenced, "
        "supersedes (the other becomes superseded) or relates_to it. The other memory must "
        "be yours (else 404, naming target); a cycle of supersedes is a 409.",
    )
    @extend_schema(
        methods=["DELETE"],
        parameters=[
            *DETAIL_PARAMETERS,
            OpenApiParameter(
                "kind",
                OpenApiTypes.STR,
                required=True,
                enum=LinkKind.values,
                description="the kind",
            ),
            OpenApiParameter(
                "target", OpenApiTypes.STR, required=True, description="the other memory's id"
            ),
        ],
        request=None,
        responses={204: None},
        description="Remove a relationship (404 when there is none). Removing the last "
        "supersedes of a superseded memory makes it active again.",
    )
    @action(detail=True, methods=["post", "delete"])
    def links(self, request, id=None):
        memory = self.get_memory()
        self.require(Role.MEMBER, memory.team_id)
        data = json_object(request.data) if request.method == "POST" else request.query_params
        payload = LinkRequestSerializer(data={k: data.get(k) for k in data if k != "project"})
        payload.is_valid(raise_exception=True)
        kind = payload.validated_data["kind"]
        target = find_memory(
            visible(self.access, include_deleted=True),
            payload.validated_data["target"],
            prefer_project_id=memory.project_id,
            field="target",
        )
        if request.method == "DELETE":
            if not unlink(memory, target, kind):
                raise exceptions.NotFound(
                    f"{memory.public_id} has no '{kind}' relationship to {target.public_id}."
                )
            return Response(status=status.HTTP_204_NO_CONTENT)
        if MemoryStatus.DELETED in (memory.status, target.status):
            raise capture.MemoryConflict("A deleted memory cannot be related; restore it first.")
        made = capture.link(memory, target, kind)
        return Response(LinkSerializer(made).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[
            *DETAIL_PARAMETERS,
            OpenApiParameter(
                "limit",
                OpenApiTypes.INT,
                description=f"at most this many similar memories (default 5, 0..{MAX_RELATED})",
            ),
        ],
        responses=RelatedSerializer,
    )
    @action(detail=True, methods=["get"])
    def related(self, request, id=None):
        """What relates to a memory: its relationships both ways, then the memories
        nearest to it by meaning that it is not linked to."""
        memory = self.get_memory()
        limit = request.query_params.get("limit", "") or "5"
        if not limit.isdigit() or int(limit) > MAX_RELATED:
            raise InvalidQuery({"limit": [f"must be a whole number from 0 to {MAX_RELATED}"]})
        found = related(self.access, memory, limit=int(limit))
        body = {"memory": memory.public_id, "links": found.links, "similar": found.similar}
        return Response(RelatedSerializer(body, context={"access": self.access}).data)

    @extend_schema(
        parameters=[AggregateParamsSerializer],
        responses=TopicsSerializer,
        description="What the memories are about: each tag and topic key with its memories "
        "counted by type, the first and last time it came up, and a weight (0..1, its "
        "memories' summed priority relative to the heaviest topic). Heaviest first; limit "
        "defaults to 50.",
        filters=False,
    )
    @action(detail=False, methods=["get"], pagination_class=None)
    def topics(self, request):
        memories, limit = self.aggregated(request)
        found = topics(memories, limit or 50)
        return Response(TopicsSerializer({"topics": [vars(t) for t in found]}).data)

    @extend_schema(
        parameters=[AggregateParamsSerializer],
        responses=TimelineSerializer,
        description="The memories as events in the order they happened, with hour buckets "
        "(UTC): the latest `limit` (default 200), oldest first.",
        filters=False,
    )
    @action(detail=False, methods=["get"], pagination_class=None)
    def timeline(self, request):
        memories, limit = self.aggregated(request)
        found = timeline(memories.select_related("session"), limit or 200)
        return Response(TimelineSerializer(vars(found), context={"access": self.access}).data)


class AgentStateView(MemoryScopedMixin, ScopedAPIView):
    """An agent's current state (its context, working memory, what it learned), one per
    agent and session."""

    parser_classes = [JSONParser]

    @extend_schema(
        parameters=[AgentStateParamsSerializer],
        responses=MemorySerializer,
        description="The agent's latest state in your projects (in a session with "
        "session=); its sections are in details.",
    )
    def get(self, request, agent: str):
        params = self.read_query(AgentStateParamsSerializer, request.query_params)
        access = self.access
        if params.validated_data.get("project"):
            project = self.resolve_project(params.validated_data["project"], role=Role.VIEWER)
            access = access.narrowed(project=project)
        states = with_listing(visible(access), access).filter(
            type=MemoryType.AGENT_STATE, agent=agent
        )
        if params.validated_data.get("session"):
            states = states.filter(session__public_id=params.validated_data["session"])
        state = states.order_by("-updated_at", "-id").first()
        if state is None:
            raise exceptions.NotFound(f"No state of agent {agent!r} in your projects.")
        return Response(MemorySerializer(state, context={"access": access}).data)

    @extend_schema(
        request=AgentStateInSerializer,
        responses={201: MemorySerializer, 200: MemorySerializer},
        description="Update the agent's state: the sections sent (current_context, "
        "working_memory, session_learnings, memory_refs) replace those of its current state "
        "in the session (or the project, without session); the others are kept. 201 when "
        "the agent had no state there yet.",
    )
    def put(self, request, agent: str):
        if len(agent) > 64 or "\x00" in agent or not agent.strip():
            raise exceptions.ValidationError({"agent": ["1 to 64 characters"]})
        payload = AgentStateInSerializer(data=json_object(request.data))
        payload.is_valid(raise_exception=True)
        values = dict(payload.validated_data)
        session = self.find_session(values.pop("session")) if values.get("session") else None
        project = self.project_for(session, values.pop("project", None))
        by = None if self.access.is_agent else request.user
        recorded = capture.update_agent_state(
            project,
            agent=agent,
            session=session,
            state=values,
            by=by,
            ownership=audience.for_record(self.access, project, None, session),
        )
        state = with_listing(Memory.objects.filter(pk=recorded.memory.pk), self.access).get()
        code = status.HTTP_201_CREATED if recorded.outcome == "created" else status.HTTP_200_OK
        body = MemorySerializer(state, context={"access": self.access}).data
        return Response(body, status=code)
