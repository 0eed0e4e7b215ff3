"""The people API (docs/people.md): a person's short-term buffer, and the diaries.

- ``GET /api/v1/people/{person}/recent?lastn=N&char=C``: the last N events of the person's
  recent sessions, newest last, with a one-paragraph summary. A person the caller has no
  sessions of answers an empty list (a name is not a secret to find out by 404s).
- ``GET /api/v1/diary``: diary entries, newest day first; with ``q``, the best matches of a
  search by meaning and keyword.
- ``GET /api/v1/diary/export``: the same entries as a zip of
  ``diary/<person>/<char>/YYYY-MM-DD.md``.

All read within the caller's scope (``teams.access.Access``); ``project`` narrows it to one
of its projects.
"""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from core.openapi import error
from core.plain_input import PlainInputMixin
from memories.api.views import MemoryScopedMixin
from memories.diary import recent
from memories.diary.export import diary_zip
from memories.diary.models import DiaryEntry
from memories.diary.query import narrowed, visible
from memories.diary.search import search_diary
from search.api.serializers import MessageRefSerializer
from teams.models import Role
from teams.viewsets import ScopedAPIView

CHAR_HELP = "a character (the sessions' agent_name): its own and the person's _shared entries"


class RecentParamsSerializer(PlainInputMixin, serializers.Serializer):
    project = serializers.CharField(required=False, help_text="'team/project' or id")
    lastn = serializers.IntegerField(
        min_value=1,
        max_value=recent.MAX_LASTN,
        default=recent.DEFAULT_LASTN,
        help_text="how many events (messages), the newest",
    )
    char = serializers.CharField(
        max_length=64, required=False, help_text="only the sessions with this character (agent)"
    )


class EventSerializer(MessageRefSerializer):
    """A message as search refers to it, with its session, character and content."""

    session = serializers.CharField(source="session.public_id")
    character = serializers.CharField(source="session.agent_name")
    content = serializers.CharField()


class RecentSerializer(serializers.Serializer):
    person = serializers.CharField()
    character = serializers.CharField(help_text="the char asked for; empty for every one")
    events = EventSerializer(many=True, help_text="oldest first, the newest last")
    summary = serializers.CharField(help_text="one extractive paragraph; empty without events")


class DiaryParamsSerializer(PlainInputMixin, serializers.Serializer):
    project = serializers.CharField(required=False, help_text="'team/project' or id")
    person = serializers.CharField(max_length=200, required=False)
    char = serializers.CharField(max_length=64, required=False, help_text=CHAR_HELP)
    after = serializers.DateField(required=False, help_text="days from this one (inclusive)")
    before = serializers.DateField(required=False, help_text="days before this one")
    q = serializers.CharField(
        max_length=1000, required=False, help_text="search by meaning and keyword"
    )
    limit = serializers.IntegerField(min_value=1, max_value=500, default=50)

    def validate(self, attrs):
        if attrs.get("after") and attrs.get("before") and attrs["after"] >= attrs["before"]:
            raise serializers.ValidationError({"before": "must be later than after"})
        return attrs


class DiaryEntrySerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project.__str__")
    relevance = serializers.FloatField(
        allow_null=True, help_text="with q: cosine similarity to the query, 0..1; else null"
    )

    class Meta:
        model = DiaryEntry
        fields = [
            "project", "person", "character", "day", "text", "happened", "decisions",
            "preferences", "open_threads", "facts", "sessions", "method", "updated_at",
            "relevance", "visibility",
        ]  # fmt: skip


class DiaryListSerializer(serializers.Serializer):
    results = DiaryEntrySerializer(many=True)


class PeopleMixin(MemoryScopedMixin):
    def scoped_access(self, params):
        """The caller's scope, narrowed to ``project`` when one is named."""
        if params.get("project"):
            return self.access.narrowed(
                project=self.resolve_project(params["project"], role=Role.VIEWER)
            )
        return self.access

    def diary_entries(self, request):
        params = self.read_query(DiaryParamsSerializer, request.query_params).validated_data
        entries = narrowed(
            visible(self.scoped_access(params)),
            person=params.get("person", ""),
            character=params.get("char", ""),
            after=params.get("after"),
            before=params.get("before"),
        ).select_related("project", "project__team")
        return params, entries


class PersonRecentView(PeopleMixin, ScopedAPIView):
    @extend_schema(
        summary="A person's recent events (short-term buffer)",
        parameters=[RecentParamsSerializer],
        responses=RecentSerializer,
        description="The last `lastn` events (messages) across the person's most recent "
        "sessions (the sessions' user_name), newest last, with a one-paragraph summary to "
        "put in a prompt. `char` keeps one character's sessions. A person you have no "
        "sessions of answers an empty list.",
    )
    def get(self, request, person: str):
        params = self.read_query(RecentParamsSerializer, request.query_params).validated_data
        character = params.get("char", "")
        found = recent.recent_events(self.scoped_access(params), person, params["lastn"], character)
        data = {
            "person": person,
            "character": character,
            "events": found.events,
            "summary": found.summary,
        }
        return Response(RecentSerializer(data).data)


class DiaryView(PeopleMixin, ScopedAPIView):
    @extend_schema(
        summary="Diary entries (list or search)",
        parameters=[DiaryParamsSerializer],
        responses=DiaryListSerializer,
        description="One entry per person, character and day, written daily from the day's "
        "sessions and memories. Newest day first; with `q`, the best matches of a search "
        "by meaning and keyword, best first.",
    )
    def get(self, request):
        params, entries = self.diary_entries(request)
        if params.get("q", "").strip():
            hits = search_diary(entries, params["q"], params["limit"])
            rows = [(hit.entry, hit.relevance) for hit in hits]
        else:
            ordered = entries.defer("embedding", "search_vector").order_by(
                "-day", "person", "character", "id"
            )
            rows = [(entry, None) for entry in ordered[: params["limit"]]]
        for entry, relevance in rows:
            entry.relevance = relevance
        return Response(DiaryListSerializer({"results": [e for e, _ in rows]}).data)


class DiaryExportView(PeopleMixin, ScopedAPIView):
    @extend_schema(
        summary="Export diaries as Markdown (zip)",
        parameters=[DiaryParamsSerializer],
        responses={
            (200, "application/zip"): OpenApiResponse(
                OpenApiTypes.BINARY, description="diary/<person>/<char>/YYYY-MM-DD.md files"
            ),
            404: error(404),
        },
        description="The diary entries you see (narrowed like GET /diary; q and limit are "
        "ignored) as a zip of Markdown files, diary/<person>/<char>/YYYY-MM-DD.md.",
    )
    def get(self, request):
        _, entries = self.diary_entries(request)
        response = HttpResponse(diary_zip(entries), content_type="application/zip")
        response["Content-Disposition"] = 'attachment; filename="diary.zip"'
        return response
