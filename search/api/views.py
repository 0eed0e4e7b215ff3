"""The search and context API: /search, /context, /entities, and the search side of one
session (/sessions/{id}/similar, /sessions/{id}/resume, routed on the sessions viewset).
Scope is always the caller's: another team's session is a 404."""

from __future__ import annotations

from functools import cache

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions
from rest_framework.decorators import action
from rest_framework.response import Response

from core.error_codes import ErrorCode
from search.api.serializers import (
    ContextParamsSerializer,
    ContextSerializer,
    EntitiesSerializer,
    EntityParamsSerializer,
    ResumeSerializer,
    SearchParamsSerializer,
    SearchResultsSerializer,
    SimilarSessionsSerializer,
)
from search.context import build_context
from search.context import resume as resume_session
from search.service import SearchRequest, search, searched_filters, sessions_with_entity
from search.similar import similar_sessions
from sessions.api.errors import SessionNotFound
from sessions.api.parsers import JSONParser
from sessions.entity_stats import entity_counts
from sessions.filters import FiltersSerializer
from sessions.forget.read_counts import opened
from sessions.models import Entity, Session
from teams.access import Access, Reading
from teams.viewsets import ScopedAPIView, ScopedViewSet

MAX_SIMILAR = 50
MAX_RESUME_MESSAGES = 500


class InvalidQuery(exceptions.ValidationError):
    """400: a search, context or entity parameter is wrong (the body names it)."""

    code = ErrorCode.INVALID_QUERY


@cache
def known_parameters(serializer_class) -> frozenset[str]:
    # Building a serializer's fields deep-copies them all: once per class, not per request.
    return frozenset(serializer_class().fields)


def reject_unknown(data, serializer_class) -> None:
    """An unknown filter is a mistake (a typo would otherwise silently widen the search)."""
    known = known_parameters(serializer_class)
    unknown = sorted(set(data) - known)
    if unknown:
        raise InvalidQuery(
            {
                "detail": f"unknown parameter(s): {', '.join(unknown)}; "
                f"known: {', '.join(sorted(known))}"
            }
        )


class FilteredView(ScopedAPIView):
    params_class = FiltersSerializer
    read_methods = ScopedAPIView.read_methods | {"POST"}  # search and context read by POST

    def handle_exception(self, exc):
        # Any field in error here is a query parameter: its answer says so by its code.
        if type(exc) is exceptions.ValidationError:
            exc = InvalidQuery(exc.detail)
        return super().handle_exception(exc)

    def read_params(self, data):
        if not hasattr(data, "keys"):
            raise exceptions.ValidationError({"detail": "send a JSON object"})
        reject_unknown(data, self.params_class)
        params = self.params_class(data=data)
        params.is_valid(raise_exception=True)
        return params

    def scope(self, params) -> Access:
        """The caller's access, narrowed to the ``project`` asked for (or the working
        directory of the request's header)."""
        return self.read_access(params.validated_data.get("project"))


SEARCH_DESCRIPTION = (
    "Hybrid search over every message of the caller's projects: PostgreSQL full-text "
    "(BM25-style IDF weighting) and pgvector cosine over message chunks. Results are ordered "
    "by `relevance` (0..1, the same meaning for every query; `min_relevance` filters on it), "
    "so it never increases down the list: the best chunk's cosine similarity plus the "
    "IDF-weighted share of the query's words present times their BM25 strength, lifted by "
    "other strong matches in the same session; injected instructions, console lines and "
    "tool output count less unless the query asks for them (an error, a command, a path; "
    "instructions). "
    "With only `entity`/`entity_type` and no `q`, lists the sessions that touched the entity."
)


class SearchView(FilteredView):
    params_class = SearchParamsSerializer

    @extend_schema(
        parameters=[SearchParamsSerializer],
        responses=SearchResultsSerializer,
        description=SEARCH_DESCRIPTION,
    )
    def get(self, request):
        return self.run(request.query_params)

    @extend_schema(
        request={"application/json": SearchParamsSerializer},
        responses=SearchResultsSerializer,
        description=SEARCH_DESCRIPTION,
    )
    def post(self, request):
        return self.run(request.data)

    def run(self, data):
        params = self.read_params(data)
        options = params.validated_data
        scope = self.scope(params)
        filters = params.filters()
        if not options["q"]:
            filters = searched_filters(filters, options["include_archived"])
            found = sessions_with_entity(scope, filters, options["limit"])
            body = {"query": "", "mode": "entity", "sessions": found, "results": []}
            return Response(SearchResultsSerializer(body).data)
        result = search(
            scope,
            SearchRequest(
                options["q"],
                mode=options["mode"],
                filters=filters,
                limit=options["limit"],
                min_relevance=options["min_relevance"],
                group_by_session=options["group"],
                mmr=options["mmr"],
                recency=options["recency"],
                include_archived=options["include_archived"],
                memory_keys=options["memory_keys"],
            ),
        )
        body = {
            "query": options["q"],
            "mode": options["mode"],
            "took_ms": result.took_ms,
            "vector_path": result.vector_path,
            "results": result.hits,
        }
        if options["group"]:
            body["sessions"] = result.sessions
        return Response(SearchResultsSerializer(body).data)


CONTEXT_DESCRIPTION = (
    "Ready-to-inject Markdown for an agent's prompt. With a query: the relevant decisions, "
    "open findings and preferences ('## Decisions', '## Open Findings', '## Preferences', "
    "one '- [DEC-002] …' line each) and the past sessions relevant to it ('## Relevant Past "
    "Discussions', then one '### Session: <date> - <Agent> (<Persona>) - <workflow>' block "
    "per session with 'Relevance: NN%'); a section goes before the sessions when it is at "
    "least as relevant. Empty when nothing reaches min_relevance. Without a query: where the "
    "project stands, to resume work: recent decisions, open findings, preferences and the "
    "latest sessions' summaries ('## Latest Sessions'). Everything fits within max_tokens: "
    "less relevant sessions show less (all of it, its key messages, its summary, or one "
    "line). What is shown counts as read."
)


class ContextView(FilteredView):
    params_class = ContextParamsSerializer

    @extend_schema(
        parameters=[ContextParamsSerializer],
        responses=ContextSerializer,
        description=CONTEXT_DESCRIPTION,
    )
    def get(self, request):
        return self.run(request.query_params)

    @extend_schema(
        request={"application/json": ContextParamsSerializer},
        responses=ContextSerializer,
        description=CONTEXT_DESCRIPTION,
    )
    def post(self, request):
        return self.run(request.data)

    def run(self, data):
        params = self.read_params(data)
        options = params.validated_data
        context = build_context(
            self.scope(params),
            options["query"],
            filters=params.filters(),
            max_sessions=options["max_sessions"],
            min_relevance=options["min_relevance"],
            max_tokens=options["max_tokens"],
            include_archived=options["include_archived"],
        )
        return Response(ContextSerializer(context).data)


def _limit(request, name: str, default: int, maximum: int) -> int:
    raw = request.query_params.get(name) or str(default)  # empty means not given
    try:
        value = int(raw)
    except ValueError:
        raise InvalidQuery({name: f"must be a whole number, not {raw!r}"}) from None
    if not 1 <= value <= maximum:
        raise InvalidQuery({name: f"must be between 1 and {maximum}"})
    return value


class SessionSearchViewSet(ScopedViewSet):
    """/sessions/{id}/similar and /sessions/{id}/resume: search's actions on one session,
    routed beside the sessions viewset's (search.api.urls). Only live sessions: one in the
    trash is a 404, as another team's is. Both show a session's title, summary and topics,
    so they read at ``Reading.SUMMARY`` (docs/visibility.md): a session the caller reads no
    summary of is a 404, and resume shows the messages only of a session whose messages the
    caller reads."""

    base_queryset = Session.objects.select_related("project", "project__team")
    parser_classes = [JSONParser]
    lookup_field = "public_id"
    lookup_url_kwarg = "id"
    scope_reading = Reading.SUMMARY

    def live_session(self, public_id: str) -> Session:
        session = self.get_queryset().alive().filter(public_id=public_id).first()
        if session is None:
            raise SessionNotFound()
        return session

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "limit", {"type": "integer", "minimum": 1, "maximum": MAX_SIMILAR}, default=5
            )
        ],
        responses=SimilarSessionsSerializer,
        description="Sessions of the same scope nearest to this one (cosine of the session "
        "vectors: the summary's embedding, or the mean of the session's chunk vectors while "
        "it has no summary yet).",
    )
    @action(detail=True, methods=["get"])
    def similar(self, request, id=None):
        session = self.live_session(id)
        limit = _limit(request, "limit", 5, MAX_SIMILAR)
        found = similar_sessions(session, self.access, limit)
        body = {
            "session": session.public_id,
            "similar": [{"session": s, "similarity": similarity} for s, similarity in found],
        }
        return Response(SimilarSessionsSerializer(body).data)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "lastn",
                {"type": "integer", "minimum": 1, "maximum": MAX_RESUME_MESSAGES},
                default=20,
            )
        ],
        responses=ResumeSerializer,
        description="What it takes to pick the session's work up again: its summary and "
        "topics plus its last N messages, as Markdown and as data.",
    )
    @action(detail=True, methods=["get"])
    def resume(self, request, id=None):
        session = self.live_session(id)
        last_n = _limit(request, "lastn", 20, MAX_RESUME_MESSAGES)
        if self.access.reading(session) != Reading.CONTENT:
            # Its summary and topics only: neither its messages nor a read of its content.
            return Response(ResumeSerializer(resume_session(session, 0)).data)
        opened(session)  # picking its work up again: an archived session comes back in full
        return Response(ResumeSerializer(resume_session(session, last_n)).data)


class EntitiesView(FilteredView):
    params_class = EntityParamsSerializer

    @extend_schema(
        parameters=[EntityParamsSerializer],
        responses=EntitiesSerializer,
        description="Entities (files, functions, classes, errors, commands, URLs, packages) "
        "the caller's sessions touched, most widespread first, each with the number of "
        "sessions and mentions. Search by entity with /search?entity=…&entity_type=….",
    )
    def get(self, request):
        params = self.read_params(request.query_params)
        data = params.validated_data
        access = self.scope(params)
        # Entities are read out of messages: only the sessions whose messages the caller
        # reads count (docs/visibility.md), so a private session's files never show.
        content = Reading.CONTENT
        sessions = params.filters().apply(access.scope(Session.objects.alive(), reading=content))
        entities = access.scope(
            Entity.objects.filter(session__in=sessions), "session__project_id", reading=content
        )
        if data.get("type"):
            entities = entities.filter(type=data["type"])
        if data.get("q"):
            entities = entities.filter(normalized__contains=data["q"].strip().lower())
        rows = entity_counts(entities, data["limit"])
        return Response(EntitiesSerializer({"entities": rows}).data)
