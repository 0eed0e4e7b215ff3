"""What the search and context API reads and writes."""

from __future__ import annotations

from rest_framework import serializers

from search.service import MAX_LIMIT, MODES
from sessions.filters import FiltersSerializer

MAX_QUERY_CHARS = 2000


class SearchParamsSerializer(FiltersSerializer):
    q = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=MAX_QUERY_CHARS,
        help_text="What to look for. Plain words match any of them; web-search syntax "
        '("a phrase", -word) is honoured by the keyword side.',
    )
    mode = serializers.ChoiceField(choices=MODES, default="hybrid")
    limit = serializers.IntegerField(default=10, min_value=1, max_value=MAX_LIMIT)
    min_relevance = serializers.FloatField(default=0.0, min_value=0.0, max_value=1.0)
    group = serializers.BooleanField(
        default=False, help_text="one entry per session, with its best messages"
    )
    mmr = serializers.BooleanField(default=False, help_text="diversify near-duplicate hits")
    recency = serializers.BooleanField(
        default=False, help_text="favour recently used and recent sessions (seed 001 decay)"
    )

    def validate(self, attrs):
        attrs = super().validate(attrs)
        attrs["q"] = attrs.get("q", "").strip()
        if not attrs["q"] and not (attrs.get("entity") or attrs.get("entity_type")):
            raise serializers.ValidationError(
                {
                    "q": "give a query, or an entity / entity_type to find the sessions "
                    "that touched it"
                }
            )
        return attrs


class SessionBriefSerializer(serializers.Serializer):
    id = serializers.CharField(source="public_id")
    project = serializers.SerializerMethodField()
    title = serializers.CharField()
    agent_name = serializers.CharField()
    agent_persona = serializers.CharField()
    workflow = serializers.CharField()
    started_at = serializers.DateTimeField()
    message_count = serializers.IntegerField()
    topics = serializers.ListField(child=serializers.CharField())
    summary = serializers.CharField()

    def get_project(self, session) -> str:
        return f"{session.project.team.slug}/{session.project.slug}"


class MessageRefSerializer(serializers.Serializer):
    seq = serializers.IntegerField()
    role = serializers.CharField()
    author = serializers.CharField()
    tool_name = serializers.CharField()
    timestamp = serializers.DateTimeField(allow_null=True)


class HitSerializer(serializers.Serializer):
    session = SessionBriefSerializer()
    message = MessageRefSerializer()
    snippet = serializers.CharField(source="snippet.text")
    highlights = serializers.ListField(
        source="snippet.highlights",
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="[start, end) character ranges of matched words in the snippet",
    )
    relevance = serializers.FloatField(help_text="0..1, comparable across queries")
    similarity = serializers.FloatField(allow_null=True, help_text="cosine of the best chunk")
    keyword_coverage = serializers.FloatField(
        help_text="IDF-weighted share of the query's words present"
    )


class SessionHitSerializer(serializers.Serializer):
    session = SessionBriefSerializer()
    relevance = serializers.FloatField()
    hits = HitSerializer(many=True)
