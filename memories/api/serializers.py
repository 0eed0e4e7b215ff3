"""What the memories API reads and writes.

A memory is sent with its type's own fields beside the common ones, in the shape of the
team's decision, finding and preference files (a decision's ``rationale`` and
``alternatives_considered``, a finding's ``severity`` and ``location``…). One input
serializer per type says which fields it has; any other field is refused by name
(``StrictSerializer``), nested objects included.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.openapi import KnownParametersOnlyExtension
from core.plain_input import PlainInputMixin
from memories.models import (
    MAX_CONTENT_CHARS,
    LinkKind,
    Memory,
    MemoryScope,
    MemoryStatus,
    MemoryType,
    Resolution,
)
from memories.retrieve.query import MemoryFilters, visible
from sessions.api.serializers import StorableDateTimeField, StorableFieldsMixin
from teams.access import Reading
from teams.models import Visibility
from transcripts.sanitize import clean_json, clean_surrogates

MAX_TAGS = 20
MAX_EVIDENCE = 100
MAX_REFERENCES = 20
DECISION_CONFIDENCE = ["high", "medium", "low", "uncertain"]
PREFERENCE_CONFIDENCE = ["explicit", "inferred", "uncertain"]
SEVERITIES = ["critical", "important", "minor"]
IMPACTS = ["high", "medium", "low"]
ANY_CONFIDENCE = [*DECISION_CONFIDENCE, *PREFERENCE_CONFIDENCE[:2]]
STATUS_FILTER = [
    MemoryStatus.ACTIVE.value,
    MemoryStatus.PROPOSED.value,
    MemoryStatus.REJECTED.value,
    MemoryStatus.SUPERSEDED.value,
    MemoryStatus.REVERTED.value,
    "all",
]


class StrictSerializer(PlainInputMixin, serializers.Serializer):
    """Refuses fields it does not know, each by its name (a typo would otherwise be
    dropped in silence)."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            known = {name for name, f in self.fields.items() if not f.read_only}
            unknown = sorted(set(data) - known)
            if unknown:
                raise serializers.ValidationError(
                    {
                        name: [f"unknown field; this one takes: {', '.join(sorted(known))}"]
                        for name in unknown
                    }
                )
        return super().to_internal_value(data)

    def validate(self, attrs):
        """Text and JSON as PostgreSQL can store them, as capture stores messages: a lone
        surrogate becomes U+FFFD, NUL characters inside JSON objects are dropped (text
        fields refuse them)."""
        attrs = super().validate(attrs)
        return {
            name: clean_json(clean_json(value, clean_surrogates)[0])[0]
            for name, value in attrs.items()
        }


class StrictSerializerExtension(KnownParametersOnlyExtension):
    """The schema says what ``StrictSerializer`` does: no other properties."""

    target_class = StrictSerializer


def text(limit: int, **kwargs) -> serializers.CharField:
    return serializers.CharField(max_length=limit, required=False, allow_blank=True, **kwargs)


def names(help_text: str) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=64),
        required=False,
        max_length=50,
        help_text=help_text,
    )


class AlternativeSerializer(StrictSerializer):
    option = serializers.CharField(max_length=500)
    rejected_because = text(2000)


class LocationSerializer(StrictSerializer):
    artifact = text(500, help_text="the file or document, e.g. /docs/requirements.md")
    section = text(500)
    line_numbers = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=10_000_000),
        required=False,
        max_length=2,
        help_text="first and last line",
    )


class AppliesToSerializer(StrictSerializer):
    projects = names("project names, or * for all")
    domains = names("e.g. authentication, security")


class LinkInSerializer(StrictSerializer):
    kind = serializers.ChoiceField(choices=LinkKind.choices)
    target = serializers.CharField(max_length=40, help_text="the other memory's id (DEC-002)")


PROJECT_HELP = (
    "'team/project' or the project's id. Not needed with an API token, nor with a session "
    "(its project)."
)


class MemoryInSerializer(StorableFieldsMixin, StrictSerializer):
    """The fields every type has."""

    storage_model = Memory
    #: names of this type's own fields, kept in ``details``
    detail_fields: tuple[str, ...] = ()

    project = serializers.CharField(required=False, help_text=PROJECT_HELP)
    content = serializers.CharField(
        max_length=MAX_CONTENT_CHARS,
        help_text="The decision, finding, preference… in one statement.",
    )
    topic = text(
        100,
        help_text="What it is about, as a key (mfa_requirements): a newer "
        "memory of the same type and topic that says otherwise supersedes it.",
    )
    tags = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, max_length=MAX_TAGS
    )
    agent = text(64, help_text="the agent that made, found or holds it (a person's character)")
    person = text(200, help_text="the person it is of (default: its session's user_name)")
    shared = serializers.BooleanField(
        required=False,
        help_text="visible to every character (agent) of its person; else, when a person's "
        "character asks, only to its own agent",
    )
    scope = serializers.ChoiceField(
        choices=MemoryScope.choices,
        required=False,
        help_text="session: for its session only; project (default); team: shared with "
        "every agent of the team",
    )
    session = serializers.CharField(
        max_length=64, required=False, help_text="the id of the session it came from"
    )
    evidence = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=2**31 - 1),
        required=False,
        max_length=MAX_EVIDENCE,
        help_text="numbers (seq) of the session's messages it came from",
    )
    occurred_at = StorableDateTimeField(
        required=False, help_text="when it was said (default: its first evidence, or now)"
    )
    pinned = serializers.BooleanField(required=False, help_text="pinned memories never decay")
    supersedes = serializers.ListField(
        child=serializers.CharField(max_length=40),
        required=False,
        max_length=MAX_REFERENCES,
        help_text="ids of memories it replaces (they become superseded, kept as history)",
    )
    links = LinkInSerializer(many=True, required=False, help_text="relationships to others")
    visibility = serializers.ChoiceField(
        choices=Visibility.choices,
        required=False,
        help_text="Who reads it: 'private' (you only), 'summary' (the team, once accepted) or "
        "'team'. Default: its session's, else your token's default, else the project's. A "
        "token that acts for no person cannot record a private memory. Changed later with "
        "PATCH (its owner; an admin only to make it less visible).",
    )

    def own_fields(self, data: dict) -> dict:
        """The type's own fields, as stored in ``details``."""
        return {name: data[name] for name in self.detail_fields if name in data}


class DecisionInSerializer(MemoryInSerializer):
    detail_fields = (
        "rationale",
        "alternatives_considered",
        "agreed_by",
        "agents_involved",
        "reversible",
        "implementation_impact",
    )

    type = serializers.ChoiceField(choices=[MemoryType.DECISION.value])
    confidence = serializers.ChoiceField(choices=DECISION_CONFIDENCE, required=False)
    rationale = text(4000, help_text="why")
    alternatives_considered = AlternativeSerializer(many=True, required=False)
    agreed_by = names("who agreed")
    agents_involved = names("the agents that took part")
    reversible = serializers.BooleanField(required=False)
    implementation_impact = serializers.ChoiceField(choices=IMPACTS, required=False)


class FindingInSerializer(MemoryInSerializer):
    detail_fields = ("category", "location", "impact", "root_cause", "next_steps")

    type = serializers.ChoiceField(choices=[MemoryType.FINDING.value])
    severity = serializers.ChoiceField(choices=SEVERITIES, required=False)
    confidence = serializers.ChoiceField(choices=DECISION_CONFIDENCE, required=False)
    category = text(100, help_text="e.g. missing_requirement, ambiguous_requirement, bug")
    location = LocationSerializer(required=False)
    impact = text(4000)
    root_cause = text(4000)
    next_steps = text(4000, help_text="what is left to do while it is open")


class PreferenceInSerializer(MemoryInSerializer):
    detail_fields = ("category", "context", "source", "applies_to")

    type = serializers.ChoiceField(choices=[MemoryType.PREFERENCE.value])
    confidence = serializers.ChoiceField(
        choices=PREFERENCE_CONFIDENCE,
        required=False,
        help_text="explicit: the person said it; inferred: from what they did",
    )
    category = text(100, help_text="e.g. policy, workflow, style")
    context = text(4000)
    source = text(100, help_text="e.g. user_statement, behavior_pattern")
    applies_to = AppliesToSerializer(required=False)


class LearningInSerializer(MemoryInSerializer):
    detail_fields = ("context", "source")

    type = serializers.ChoiceField(choices=[MemoryType.LEARNING.value])
    confidence = serializers.ChoiceField(choices=DECISION_CONFIDENCE, required=False)
    context = text(4000)
    source = text(100)


class FactInSerializer(MemoryInSerializer):
    type = serializers.ChoiceField(choices=[MemoryType.FACT.value])
    confidence = serializers.ChoiceField(choices=DECISION_CONFIDENCE, required=False)


# Agent states are kept one per agent: PUT /api/v1/agent-states/{agent}.
INPUT_BY_TYPE = {
    MemoryType.DECISION: DecisionInSerializer,
    MemoryType.FINDING: FindingInSerializer,
    MemoryType.PREFERENCE: PreferenceInSerializer,
    MemoryType.LEARNING: LearningInSerializer,
    MemoryType.FACT: FactInSerializer,
}
# What an edit may not change: record a new memory (or link one) instead.
NOT_EDITABLE = (
    "type",
    "project",
    "session",
    "evidence",
    "scope",
    "supersedes",
    "links",
    "occurred_at",
)


def input_for(kind) -> type[MemoryInSerializer]:
    """The input serializer of ``kind``; an unknown type (or an agent state, which has an
    endpoint of its own) is a 400 naming ``type``."""
    if kind == MemoryType.AGENT_STATE:
        raise serializers.ValidationError(
            {"type": ["agent states are kept per agent: PUT /api/v1/agent-states/{agent}"]}
        )
    if not isinstance(kind, str) or kind not in INPUT_BY_TYPE:
        raise serializers.ValidationError(
            {"type": [f"unknown memory type {kind!r}; one of: {', '.join(INPUT_BY_TYPE)}"]}
        )
    return INPUT_BY_TYPE[kind]


def _patch_fields() -> dict:
    fields = {}
    for serializer in INPUT_BY_TYPE.values():
        for name, field in serializer._declared_fields.items():
            if name not in NOT_EDITABLE and name not in fields:
                fields[name] = copy.deepcopy(field)
                fields[name].required = False
    fields["confidence"] = serializers.ChoiceField(
        choices=ANY_CONFIDENCE,
        required=False,
        help_text="a preference's explicit | inferred | uncertain; else high | medium | low | "
        "uncertain",
    )
    return fields


MemoryPatchSerializer = type(
    "MemoryPatchSerializer",
    (StrictSerializer,),
    {
        "__doc__": "Fields an edit may change: the common ones and the memory's type's own "
        "(another type's field is refused). A type's own field set to null is removed.",
        **_patch_fields(),
    },
)


class EvidenceSerializer(serializers.Serializer):
    session = serializers.CharField(source="session.public_id")
    seq = serializers.IntegerField(source="message.seq")
    quote = serializers.CharField()


class StaleSerializer(serializers.Serializer):
    since = serializers.DateTimeField(help_text="when the edit was seen")
    session = serializers.CharField(allow_null=True, help_text="the session that edited its files")


class MemorySerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="public_id", read_only=True)
    project = serializers.SerializerMethodField()
    session = serializers.SerializerMethodField()
    created_by = serializers.SerializerMethodField()
    evidence = EvidenceSerializer(many=True, read_only=True)
    relevance = serializers.SerializerMethodField(
        help_text="with q: how well it matches, 0..1 (as message search); else null"
    )
    resolution = serializers.CharField(help_text="a finding's: open or resolved; else empty")
    stale = serializers.SerializerMethodField(
        help_text="null, or {since, session}: a later session edited the files it is about, so "
        "it may be stale (POST …/confirm clears it)"
    )
    owner = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,
        help_text="The person whose memory it is (its session's owner, or who recorded it); "
        "null: the team's.",
    )

    class Meta:
        model = Memory
        fields = [
            "id",
            "project",
            "type",
            "scope",
            "content",
            "details",
            "topic",
            "tags",
            "confidence",
            "severity",
            "resolution",
            "agent",
            "person",
            "shared",
            "origin",
            "created_by",
            "extractor",
            "session",
            "evidence",
            "occurred_at",
            "base_priority",
            "priority",
            "last_accessed_at",
            "access_count",
            "pinned",
            "status",
            "files",
            "stale",
            "deleted_at",
            "delete_reason",
            "created_at",
            "updated_at",
            "relevance",
            "owner",
            "visibility",
        ]
        read_only_fields = fields

    def get_project(self, memory) -> str:
        return f"{memory.project.team.slug}/{memory.project.slug}"

    def get_session(self, memory) -> str | None:
        return self._session_id(memory.session) if memory.session_id else None

    def _session_id(self, session) -> str | None:
        """A session's id, unless the reader (``access`` in the context) may not even read
        its summary: a teammate's private session stays unnamed (a memory its owner shared
        out of it, a memory a private session made stale)."""
        access = self.context.get("access")
        if access is not None and access.reading(session) == Reading.LISTED:
            return None
        return session.public_id

    def get_created_by(self, memory) -> str | None:
        return memory.created_by.get_username() if memory.created_by_id else None

    def get_relevance(self, memory) -> float | None:
        return getattr(memory, "relevance", None)

    @extend_schema_field(StaleSerializer(allow_null=True))
    def get_stale(self, memory) -> dict | None:
        if memory.stale_since is None:
            return None
        session = memory.stale_session
        return {
            "since": memory.stale_since,
            "session": self._session_id(session) if session is not None else None,
        }


class LinkOutSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=LinkKind.choices)
    direction = serializers.ChoiceField(
        choices=["out", "in"],
        help_text="out: this memory <kind> the other; in: the other <kind> this one",
    )
    memory = MemorySerializer()


class RecordedSerializer(MemorySerializer):
    """The memory recorded, or the one it restated (merged: one more access, its evidence
    and tags added)."""

    outcome = serializers.ChoiceField(choices=["created", "merged"])
    superseded = serializers.ListField(
        child=serializers.CharField(), help_text="ids of the memories it replaced"
    )

    class Meta(MemorySerializer.Meta):
        fields = [*MemorySerializer.Meta.fields, "outcome", "superseded"]
        read_only_fields = fields


class HistorySerializer(serializers.Serializer):
    """One change of a memory's status (or of a finding's resolution)."""

    at = serializers.DateTimeField()
    from_status = serializers.CharField(help_text="empty: when it was recorded")
    to_status = serializers.CharField()
    by = serializers.CharField(source="who", help_text="a person's name, or what acted")
    reason = serializers.CharField()
    related = serializers.SerializerMethodField(help_text="the memory it concerns (superseded by…)")

    def get_related(self, event) -> str | None:
        return event.related.public_id if event.related_id else None


class MemoryDetailSerializer(MemorySerializer):
    links = serializers.SerializerMethodField()
    history = serializers.SerializerMethodField(
        help_text="every change of its status, oldest first: who, when, why"
    )

    class Meta(MemorySerializer.Meta):
        fields = [*MemorySerializer.Meta.fields, "links", "history"]
        read_only_fields = fields

    @extend_schema_field(HistorySerializer(many=True))
    def get_history(self, memory) -> list[dict]:
        events = memory.history.select_related("by", "related").order_by("at", "id")
        return HistorySerializer(events, many=True).data

    def get_links(self, memory) -> list[dict]:
        """Its relationships both ways, to the memories the caller (``access`` in the
        context; without one, none) reads: {kind, direction, memory: id}."""
        access = self.context.get("access")
        if access is None:
            return []
        seen = visible(access, include_deleted=True)
        out = [
            {"kind": link.kind, "direction": "out", "memory": link.target.public_id}
            for link in memory.links_out.filter(target__in=seen).select_related("target")
        ]
        return out + [
            {"kind": link.kind, "direction": "in", "memory": link.source.public_id}
            for link in memory.links_in.filter(source__in=seen).select_related("source")
        ]


class SimilarSerializer(serializers.Serializer):
    similarity = serializers.FloatField(help_text="cosine similarity of their meanings")
    memory = MemorySerializer()


class RelatedSerializer(serializers.Serializer):
    memory = serializers.CharField(help_text="the memory's id")
    links = LinkOutSerializer(many=True)
    similar = SimilarSerializer(many=True, help_text="nearest by meaning, not linked")


class ResolveSerializer(StrictSerializer):
    by = text(64, help_text="who resolved it (default: the caller)")
    action_taken = text(4000)
    verification = text(4000)
    resolved_by = serializers.CharField(
        max_length=40,
        required=False,
        help_text="the memory that resolves it (a decision, DEC-004): linked 'resolves'",
    )


class AcceptSerializer(StrictSerializer):
    content = serializers.CharField(
        required=False,
        max_length=MAX_CONTENT_CHARS,
        validators=[RegexValidator(r"\S", "A memory needs its content.")],
        help_text="edit the statement, then accept it (1 to 4000 characters, not only spaces)",
    )
    reason = text(500, help_text="why (kept in its history)")


class VisibilitySerializer(StrictSerializer):
    visibility = serializers.ChoiceField(
        choices=Visibility.choices,
        help_text="'private' (its owner only), 'summary' (the team, once accepted) or 'team'",
    )


class ReasonSerializer(StrictSerializer):
    reason = text(500, help_text="why (kept in its history)")


class RevertSerializer(StrictSerializer):
    reason = serializers.CharField(
        max_length=500, help_text="why it is withdrawn (kept in its history)"
    )


class BulkReviewSerializer(StrictSerializer):
    accept = serializers.ListField(
        child=serializers.CharField(max_length=40),
        required=False,
        max_length=500,
        help_text="ids of the memories to accept",
    )
    reject = serializers.ListField(
        child=serializers.CharField(max_length=40),
        required=False,
        max_length=500,
        help_text="ids of the memories to reject",
    )
    reason = text(500, help_text="why (kept in each one's history)")
    project = serializers.CharField(required=False, help_text="'team/project' or id")

    def validate(self, attrs):
        attrs = super().validate(attrs)
        both = set(attrs.get("accept", [])) & set(attrs.get("reject", []))
        if both:
            raise serializers.ValidationError(
                {"reject": [f"{sorted(both)[0]} is both accepted and rejected"]}
            )
        return attrs


class ReviewedSerializer(serializers.Serializer):
    accepted = serializers.ListField(child=serializers.CharField())
    rejected = serializers.ListField(child=serializers.CharField())


class LinkRequestSerializer(StrictSerializer):
    kind = serializers.ChoiceField(choices=LinkKind.choices)
    target = serializers.CharField(max_length=40, help_text="the other memory's id")


class LinkSerializer(serializers.Serializer):
    source = serializers.CharField(source="source.public_id")
    kind = serializers.CharField()
    target = serializers.CharField(source="target.public_id")


class AgentStateParamsSerializer(PlainInputMixin, serializers.Serializer):
    project = serializers.CharField(required=False, help_text="'team/project' or id")
    session = serializers.CharField(
        max_length=64, required=False, help_text="the state in this session"
    )


class AgentStateInSerializer(StrictSerializer):
    project = serializers.CharField(required=False, help_text="'team/project' or id")
    session = serializers.CharField(
        max_length=64, required=False, help_text="the session it is the state of (optional)"
    )
    current_context = serializers.DictField(
        required=False, help_text="current_task, current_phase, focus_area, active_artifacts"
    )
    working_memory = serializers.DictField(
        required=False, help_text="e.g. concerns_identified, methods_applied"
    )
    session_learnings = serializers.ListField(
        child=serializers.CharField(max_length=1000), required=False, max_length=100
    )
    memory_refs = serializers.DictField(
        required=False, help_text="ids of memories: decisions_made, findings_created, …"
    )


class RepeatedField(serializers.ListField):
    """A query parameter given several times (type=decision&type=finding) or once with
    commas (type=decision,finding)."""

    def to_internal_value(self, data):
        if isinstance(data, str):
            data = [data]
        if isinstance(data, list):
            data = [
                part.strip()
                for item in data
                if isinstance(item, str)
                for part in item.split(",")
                if part.strip()
            ]
        return super().to_internal_value(data)


class MemoryFiltersSerializer(PlainInputMixin, serializers.Serializer):
    """Which memories: every filter is optional; together they all apply."""

    project = serializers.CharField(required=False, help_text="'team/project' or id")
    type = RepeatedField(
        child=serializers.ChoiceField(choices=MemoryType.choices),
        required=False,
        help_text="one or more types (repeat the parameter, or separate by commas)",
    )
    tag = serializers.CharField(max_length=64, required=False)
    topic = serializers.CharField(max_length=100, required=False, help_text="the topic key")
    agent = serializers.CharField(max_length=64, required=False)
    person = serializers.CharField(
        max_length=200, required=False, help_text="memories of this person (user_name)"
    )
    character = serializers.CharField(
        max_length=64,
        required=False,
        help_text="what this character (agent) may read: its own memories, those marked "
        "shared and those of no agent",
    )
    session = serializers.CharField(max_length=64, required=False, help_text="a session's id")
    after = StorableDateTimeField(required=False, help_text="said at or after this time")
    before = StorableDateTimeField(required=False, help_text="said before this time")
    confidence = RepeatedField(
        child=serializers.ChoiceField(choices=ANY_CONFIDENCE),
        required=False,
    )
    status = serializers.ChoiceField(
        choices=STATUS_FILTER,
        required=False,
        help_text="active (default), proposed (waiting for review), rejected, superseded "
        "(replaced by a newer memory), reverted (withdrawn), or all (but deleted)",
    )
    resolution = serializers.ChoiceField(
        choices=Resolution.choices, required=False, help_text="findings: open or resolved"
    )
    min_priority = serializers.FloatField(
        min_value=0, max_value=1, required=False, help_text="only memories at least this important"
    )
    include_decayed = serializers.BooleanField(
        required=False,
        default=False,
        help_text="also memories whose priority decayed below 0.3 (left out by default)",
    )
    pinned = serializers.BooleanField(required=False, allow_null=True, default=None)
    visibility = serializers.ChoiceField(
        choices=Visibility.choices,
        required=False,
        help_text="only those of this visibility among what you read (private: your own)",
    )

    def filters(self, session_id: int | None) -> MemoryFilters:
        data = self.validated_data
        status = data.get("status", MemoryStatus.ACTIVE)
        return MemoryFilters(
            types=tuple(data.get("type", ())),
            tag=data.get("tag", ""),
            topic=data.get("topic", ""),
            agent=data.get("agent", ""),
            person=data.get("person", ""),
            character=data.get("character", "").strip().lower(),
            session_id=session_id,
            after=data.get("after"),
            before=data.get("before"),
            confidence=tuple(data.get("confidence", ())),
            status="" if status == "all" else status,
            resolution=data.get("resolution", ""),
            min_priority=data.get("min_priority"),
            include_decayed=data["include_decayed"],
            pinned=data.get("pinned"),
            visibility=data.get("visibility", ""),
        )


SORTS = {
    "priority": ("priority", "id"),
    "-priority": ("-priority", "-id"),
    "time": ("occurred_at", "id"),
    "-time": ("-occurred_at", "-id"),
}


class MemoryListParamsSerializer(MemoryFiltersSerializer):
    q = serializers.CharField(
        max_length=1000,
        required=False,
        help_text="search by meaning and keyword: the best matches first, with relevance "
        "(one page of at most `limit`)",
    )
    min_relevance = serializers.FloatField(
        min_value=0.0,
        max_value=1.0,
        required=False,
        default=0.0,
        help_text="with `q`: only matches at least this relevant (0..1, as message search)",
    )
    sort = serializers.ChoiceField(
        choices=list(SORTS),
        required=False,
        default="-priority",
        help_text="-priority (default), priority, -time (newest first) or time",
    )


class AggregateParamsSerializer(MemoryFiltersSerializer):
    limit = serializers.IntegerField(
        min_value=1, max_value=1000, required=False, help_text="at most this many"
    )


class TopicSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="a tag or topic key")
    weight = serializers.FloatField(
        help_text="0..1: its memories' summed priority, relative to the heaviest topic"
    )
    mentions = serializers.IntegerField(help_text="how many memories are about it")
    first_mentioned = serializers.DateTimeField()
    last_mentioned = serializers.DateTimeField()
    by_type = serializers.DictField(child=serializers.IntegerField())
    memories = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="ids by type, most important first",
    )


class TopicsSerializer(serializers.Serializer):
    topics = TopicSerializer(many=True)


class TimelineEventSerializer(serializers.Serializer):
    timestamp = serializers.DateTimeField(source="occurred_at")
    type = serializers.CharField()
    ref = serializers.CharField(source="public_id")
    agent = serializers.CharField()
    session = serializers.SerializerMethodField()
    topics = serializers.ListField(child=serializers.CharField(), source="tags")
    severity = serializers.CharField()
    status = serializers.CharField()
    content = serializers.CharField()

    def get_session(self, memory) -> str | None:
        if not memory.session_id:
            return None
        return MemorySerializer(context=self.context)._session_id(memory.session)


class BucketSerializer(serializers.Serializer):
    event_count = serializers.IntegerField()
    event_refs = serializers.ListField(child=serializers.CharField())


class TimelineSerializer(serializers.Serializer):
    events = TimelineEventSerializer(many=True, help_text="oldest first")
    buckets = serializers.DictField(child=BucketSerializer(), help_text="by UTC hour")
    truncated = serializers.BooleanField(help_text="older events were left out (see limit)")
