"""The search and context API: /search, /context, /entities, /sessions/{id}/similar,
/sessions/{id}/resume. Scope is always the caller's: another team's session is a 404."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from django.db.models import Count, Max, Sum
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.response import Response

from search.api.serializers import (
    MAX_QUERY_CHARS,
    HitSerializer,
    SearchParamsSerializer,
    SessionBriefSerializer,
    SessionHitSerializer,
)
from search.context import DEFAULT_MAX_TOKENS, build_context, resume
from search.service import SearchRequest, search, sessions_with_entity
from search.similar import similar_sessions
from sessions.api.serializers import MessageSerializer
from sessions.filters import Filters, FiltersSerializer
from sessions.models import Entity, EntityType, Session
from teams.access import Access
from teams.models import Role
from teams.viewsets import ScopedAPIView

MAX_SIMILAR = 50
MAX_ENTITIES = 500
MAX_RESUME_MESSAGES = 500


@cache
def known_parameters(serializer_class) -> frozenset[str]:
    # Building a serializer's fields deep-copies them all: once per class, not per request.
    return frozenset(serializer_class().fields)


def reject_unknown(data, serializer_class) -> None:
    """An unknown filter is a mistake (a typo would otherwise silently widen the search)."""
    known = known_parameters(serializer_class)
    unknown = sorted(set(data) - known)
    if unknown:
        raise exceptions.ValidationError(
            {
                "detail": f"unknown parameter(s): {', '.join(unknown)}; "
                f"known: {', '.join(sorted(known))}"
            }
        )


class FilteredView(ScopedAPIView):
    params_class = FiltersSerializer

    def read_params(self, data):
        if not hasattr(data, "keys"):
            raise exceptions.ValidationError({"detail": "send a JSON object"})
        reject_unknown(data, self.params_class)
        params = self.params_class(data=data)
        params.is_valid(raise_exception=True)
        return params

    def scope(self, params) -> Access:
        """The caller's access, narrowed to the ``project`` asked for."""
        value = params.validated_data.get("project")
        if not value:
            return self.access
        return self.access.narrowed(project=self.resolve_project(value, role=Role.VIEWER))


SEARCH_DESCRIPTION = (
    "Hybrid search over every message of the caller's projects: PostgreSQL full-text "
    "(BM25-style IDF weighting) and pgvector cosine over message chunks, fused by reciprocal "
    "rank. `relevance` (0..1) is semantic + (1 − semantic) × 0.5 × keyword, where semantic "
    "maps the best chunk's cosine similarity linearly from 0.1 (→0) to 0.55 (→1) and keyword "
    "is the IDF-weighted share of the query's words present; it means the same across "
    "queries. "
    "With only `entity`/`entity_type` and no `q`, lists the sessions that touched the entity."
)


SEARCH_RESULTS = inline_serializer(
    "SearchResults",
    {
        "query": serializers.CharField(),
        "mode": serializers.CharField(help_text="the search mode, or 'entity' without a query"),
        "took_ms": serializers.FloatField(required=False, help_text="absent in entity mode"),
        "vector_path": serializers.CharField(
            required=False,
            help_text="how the vector side ran: exact, team-hnsw, quantized, hnsw or none",
        ),
        "results": HitSerializer(many=True),
        "sessions": SessionHitSerializer(many=True, required=False),
    },
)


class SearchView(FilteredView):
    params_class = SearchParamsSerializer

    @extend_schema(
        parameters=[SearchParamsSerializer],
        responses=SEARCH_RESULTS,
        description=SEARCH_DESCRIPTION,
    )
    def get(self, request):
        return self.run(request.query_params)

    @extend_schema(
        request={"application/json": SearchParamsSerializer},
        responses=SEARCH_RESULTS,
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
            found = sessions_with_entity(scope, filters, options["limit"])
            return Response(
                {
                    "query": "",
                    "mode": "entity",
                    "sessions": [
                        {
                            "session": SessionBriefSerializer(s.session).data,
                            "relevance": 1.0,
                            "hits": [],
                        }
                        for s in found
                    ],
                    "results": [],
                }
            )
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
            ),
        )
        body = {
            "query": options["q"],
            "mode": options["mode"],
            "took_ms": round(result.took_ms, 1),
            "vector_path": result.vector_path,
            "results": HitSerializer(result.hits, many=True).data,
        }
        if options["group"]:
            body["sessions"] = SessionHitSerializer(result.sessions, many=True).data
        return Response(body)


class ContextParamsSerializer(FiltersSerializer):
    query = serializers.CharField(max_length=MAX_QUERY_CHARS)
    current_agent = serializers.CharField(
        required=False, max_length=64, help_text="only sessions of this agent (seed 000)"
    )
    current_workflow = serializers.CharField(required=False, max_length=100)
    max_sessions = serializers.IntegerField(default=3, min_value=1, max_value=20)
    min_relevance = serializers.FloatField(default=0.3, min_value=0.0, max_value=1.0)
    max_tokens = serializers.IntegerField(
        default=DEFAULT_MAX_TOKENS, min_value=50, max_value=100_000
    )

    def filters(self) -> Filters:
        filters = super().filters()
        data = self.validated_data
        changes = {}
        if data.get("current_agent"):
            changes["agent"] = data["current_agent"]
        if data.get("current_workflow"):
            changes["workflow"] = data["current_workflow"]
        return replace(filters, **changes)


class ContextView(FilteredView):
    params_class = ContextParamsSerializer

    @extend_schema(
        request={"application/json": ContextParamsSerializer},
        responses=inline_serializer(
            "Context",
            {
                "markdown": serializers.CharField(),
                "tokens": serializers.IntegerField(),
                "max_tokens": serializers.IntegerField(),
                "tokenizer": serializers.CharField(),
                "sessions": serializers.ListField(child=serializers.DictField()),
            },
        ),
        description="Seed 000 get_relevant_context: seed 000's Markdown ('## Relevant Past "
        "Discussions', one '### Session: <date> - <Agent> (<Persona>) - <workflow>' block per "
        "session with 'Relevance: NN%'), empty when nothing reaches min_relevance, within "
        "max_tokens (seed 003 compression levels: full, key messages, summary, one line).",
    )
    def post(self, request):
        params = self.read_params(request.data)
        data = params.validated_data
        context = build_context(
            self.scope(params),
            data["query"],
            filters=params.filters(),
            max_sessions=data["max_sessions"],
            min_relevance=data["min_relevance"],
            max_tokens=data["max_tokens"],
        )
        return Response(
            {
                "markdown": context.markdown,
                "tokens": context.tokens,
                "max_tokens": context.max_tokens,
                "tokenizer": "all-MiniLM-L6-v2 WordPiece",
                "sessions": [
                    {
                        "session": SessionBriefSerializer(b.session).data,
                        "relevance": round(b.relevance, 4),
                        "level": b.level,
                        "tokens": b.tokens,
                        "messages": b.message_seqs,
                    }
                    for b in context.blocks
                ],
            }
        )


class SessionDetailView(ScopedAPIView):
    base_queryset = Session.objects.alive().select_related("project", "project__team")

    def get_session(self, public_id: str) -> Session:
        session = self.get_queryset().filter(public_id=public_id).first()
        if session is None:
            raise exceptions.NotFound("No such session.")
        return session


def _limit(request, name: str, default: int, maximum: int) -> int:
    raw = request.query_params.get(name) or str(default)  # empty means not given
    try:
        value = int(raw)
    except ValueError:
        raise exceptions.ValidationError({name: f"must be a whole number, not {raw!r}"}) from None
    if not 1 <= value <= maximum:
        raise exceptions.ValidationError({name: f"must be between 1 and {maximum}"})
    return value


class SimilarSessionsView(SessionDetailView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "limit", {"type": "integer", "minimum": 1, "maximum": MAX_SIMILAR}, default=5
            )
        ],
        responses=inline_serializer(
            "SimilarSessions",
            {
                "session": serializers.CharField(),
                "similar": serializers.ListField(child=serializers.DictField()),
            },
        ),
        description="Seed 003 find_similar: sessions of the same scope nearest to this one "
        "(cosine of the session vectors: the summary's embedding, or the mean of the "
        "session's chunk vectors while it has no summary yet).",
    )
    def get(self, request, id):
        session = self.get_session(id)
        limit = _limit(request, "limit", 5, MAX_SIMILAR)
        found = similar_sessions(session, self.access, limit)
        return Response(
            {
                "session": session.public_id,
                "similar": [
                    {"session": SessionBriefSerializer(s).data, "similarity": round(sim, 4)}
                    for s, sim in found
                ],
            }
        )


class ResumeView(SessionDetailView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "lastn",
                {"type": "integer", "minimum": 1, "maximum": MAX_RESUME_MESSAGES},
                default=20,
            )
        ],
        responses=inline_serializer(
            "Resume",
            {
                "session": SessionBriefSerializer(),
                "markdown": serializers.CharField(),
                "tokens": serializers.IntegerField(),
                "messages": MessageSerializer(many=True),
            },
        ),
        description="Seed 003 load_context_for_session: the session's summary and topics plus "
        "its last N messages, as Markdown and as data, to resume the work.",
    )
    def get(self, request, id):
        session = self.get_session(id)
        last_n = _limit(request, "lastn", 20, MAX_RESUME_MESSAGES)
        result = resume(session, last_n)
        return Response(
            {
                "session": SessionBriefSerializer(session).data,
                "markdown": result.markdown,
                "tokens": result.tokens,
                "messages": MessageSerializer(result.messages, many=True).data,
            }
        )


class EntityParamsSerializer(FiltersSerializer):
    type = serializers.ChoiceField(choices=EntityType.choices, required=False)
    q = serializers.CharField(required=False, max_length=200, help_text="part of the value")
    limit = serializers.IntegerField(default=50, min_value=1, max_value=MAX_ENTITIES)


class EntitiesView(FilteredView):
    params_class = EntityParamsSerializer

    @extend_schema(
        parameters=[EntityParamsSerializer],
        responses=inline_serializer(
            "Entities", {"entities": serializers.ListField(child=serializers.DictField())}
        ),
        description="Entities (files, functions, classes, errors, commands, URLs, packages) "
        "the caller's sessions touched, most widespread first, each with the number of "
        "sessions and mentions. Search by entity with /search?entity=…&entity_type=….",
    )
    def get(self, request):
        params = self.read_params(request.query_params)
        data = params.validated_data
        access = self.scope(params)
        sessions = params.filters().apply(access.scope(Session.objects.alive()))
        entities = access.scope(Entity.objects.filter(session__in=sessions), "session__project_id")
        if data.get("type"):
            entities = entities.filter(type=data["type"])
        if data.get("q"):
            entities = entities.filter(normalized__contains=data["q"].strip().lower())
        rows = (
            entities.values("type", "normalized")
            .annotate(
                value=Max("value"),
                sessions=Count("session", distinct=True),
                mentions=Sum("count"),
                last_seen=Max("session__started_at"),
            )
            .order_by("-sessions", "-mentions", "type", "normalized")[: data["limit"]]
        )
        return Response({"entities": list(rows)})
