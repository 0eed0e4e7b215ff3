"""What the search and context API reads and writes."""

from __future__ import annotations

from dataclasses import replace

from rest_framework import serializers

from search.context import DEFAULT_MAX_TOKENS
from search.service import MAX_LIMIT, MODES
from sessions.api.serializers import MessageSerializer
from sessions.filters import Filters, FiltersSerializer
from sessions.models import EntityType

MAX_QUERY_CHARS = 2000
MAX_ENTITIES = 500
DATE_FORMATS = ["iso-8601", "%Y-%m-%d"]
# What the context's token counts are counted with (sessions.embedding.tokens).
TOKENIZER = "all-MiniLM-L6-v2 WordPiece"


def include_archived_field() -> serializers.BooleanField:
    return serializers.BooleanField(
        default=False,
        help_text="also look in archived sessions (unused for the project's archive period): "
        "their messages are found by keyword only until they are opened or restored",
    )


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
    memory_keys = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="also find messages through the memories recorded from them (a memory "
        "matching the query points to its messages); unset: the server's default "
        "(SEARCH_MEMORY_KEYS, off unless configured)",
    )
    group = serializers.BooleanField(
        default=False, help_text="one entry per session, with its best messages"
    )
    mmr = serializers.BooleanField(default=False, help_text="diversify near-duplicate hits")
    recency = serializers.BooleanField(
        default=False,
        help_text="favour sessions by their decay priority: recently read and often read, "
        "fading with the time since they were last read and with their age",
    )
    include_archived = include_archived_field()

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


class ContextParamsSerializer(FiltersSerializer):
    query = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=MAX_QUERY_CHARS,
        help_text="what the agent is about to work on; without it, where the project stands: "
        "recent decisions, open findings, preferences and the latest sessions' summaries",
    )
    current_agent = serializers.CharField(
        required=False, max_length=64, help_text="only sessions of this agent"
    )
    current_workflow = serializers.CharField(required=False, max_length=100)
    max_sessions = serializers.IntegerField(default=3, min_value=1, max_value=20)
    min_relevance = serializers.FloatField(default=0.3, min_value=0.0, max_value=1.0)
    max_tokens = serializers.IntegerField(
        default=DEFAULT_MAX_TOKENS, min_value=50, max_value=100_000
    )
    include_archived = include_archived_field()

    def filters(self) -> Filters:
        filters = super().filters()
        data = self.validated_data
        changes = {}
        if data.get("current_agent"):
            changes["agent"] = data["current_agent"]
        if data.get("current_workflow"):
            changes["workflow"] = data["current_workflow"]
        return replace(filters, **changes)


class EntityParamsSerializer(FiltersSerializer):
    type = serializers.ChoiceField(choices=EntityType.choices, required=False)
    q = serializers.CharField(required=False, max_length=200, help_text="part of the value")
    limit = serializers.IntegerField(default=50, min_value=1, max_value=MAX_ENTITIES)


# --- answers ------------------------------------------------------------------------------


class RoundedFloatField(serializers.FloatField):
    """A float rounded to ``places`` decimals: scores and timings carry no false precision."""

    def __init__(self, places: int, **kwargs):
        super().__init__(**kwargs)
        self.places = places

    def to_representation(self, value) -> float:
        return round(float(value), self.places)


class SearchResultsSerializer(serializers.Serializer):
    query = serializers.CharField()
    mode = serializers.CharField(help_text="the search mode, or 'entity' without a query")
    took_ms = RoundedFloatField(1, required=False, help_text="absent in entity mode")
    vector_path = serializers.CharField(
        required=False,
        help_text="how the vector side ran: exact, team-hnsw, quantized, hnsw or none",
    )
    results = HitSerializer(many=True)
    sessions = SessionHitSerializer(many=True, required=False)


class ContextBlockSerializer(serializers.Serializer):
    """One session's part of the context."""

    session = SessionBriefSerializer()
    relevance = RoundedFloatField(4)
    level = serializers.CharField(
        help_text="how much of it is shown: full, key (its key messages), summary or line"
    )
    tokens = serializers.IntegerField()
    messages = serializers.ListField(
        child=serializers.IntegerField(),
        source="message_seqs",
        help_text="the seq of each message shown",
    )


class ContextSectionSerializer(serializers.Serializer):
    """A part of the context other than sessions (decisions, open findings, preferences)."""

    heading = serializers.CharField(help_text="its Markdown heading, e.g. '## Decisions'")
    relevance = RoundedFloatField(4, help_text="its best line's relevance; 1 without a query")
    tokens = serializers.IntegerField()
    ids = serializers.ListField(
        child=serializers.CharField(), help_text="the ids of what it shows (DEC-002 …)"
    )


class ContextSerializer(serializers.Serializer):
    markdown = serializers.CharField()
    tokens = serializers.IntegerField()
    max_tokens = serializers.IntegerField()
    tokenizer = serializers.SerializerMethodField()
    sessions = ContextBlockSerializer(many=True, source="blocks")
    sections = ContextSectionSerializer(many=True)

    def get_tokenizer(self, context) -> str:
        return TOKENIZER


class SimilarSessionSerializer(serializers.Serializer):
    session = SessionBriefSerializer()
    similarity = RoundedFloatField(4, help_text="cosine similarity of the session vectors")


class SimilarSessionsSerializer(serializers.Serializer):
    session = serializers.CharField(help_text="the session's id")
    similar = SimilarSessionSerializer(many=True)


class ResumeSerializer(serializers.Serializer):
    session = SessionBriefSerializer()
    markdown = serializers.CharField()
    tokens = serializers.IntegerField()
    messages = MessageSerializer(many=True)


class EntityCountSerializer(serializers.Serializer):
    """An entity and how widespread it is among the caller's sessions."""

    type = serializers.ChoiceField(choices=EntityType.choices)
    normalized = serializers.CharField()
    value = serializers.CharField(help_text="one spelling of it as written")
    sessions = serializers.IntegerField(help_text="how many sessions touched it")
    mentions = serializers.IntegerField(help_text="how often, in all")
    last_seen = serializers.DateTimeField(help_text="the latest start of those sessions")


class EntitiesSerializer(serializers.Serializer):
    entities = EntityCountSerializer(many=True)
