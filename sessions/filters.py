"""What a session list or a search may be narrowed by: one vocabulary, read one way.

``Filters`` is what a caller asked for. ``FiltersSerializer`` reads it from request
parameters — the API's query strings (the session list, search, entities), search's JSON
body, and the UI's GET forms — with the same checks and the same field errors everywhere.
Two stores answer it: ``Filters.apply`` narrows a ``Session`` queryset (the API's and the
UI's session lists, bulk selection), and ``search/filters.py`` writes the same conditions
in SQL for search. Which caller sees what (teams, projects) is not a filter: that is
``teams.access.Access``; ``project`` here only names the project to narrow it to.

People and characters (docs/people.md): ``person`` is the session's ``user_name``; the character
is the agent, ``agent`` (``agent_name``, what docs/people.md calls the character; ``agent_persona``
only says how it presents itself), so no filter of its own.

Every filter means the same on both stores. ``role`` is about messages: search keeps only
messages of that speaker, and a session list (or search by entity alone) keeps the
sessions that have at least one.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime

from django.db.models import Exists, OuterRef
from rest_framework import serializers

from core.plain_input import PlainInputMixin
from sessions.api.serializers import StorableDateTimeField
from sessions.models import (
    Entity,
    EntityType,
    Lifecycle,
    Message,
    MessageRole,
    SessionStatus,
    source_formats,
)
from teams.access import Access, Reading

# A date alone is that day's midnight.
DATE_FORMATS = ["iso-8601", "%Y-%m-%d"]
# (after, before) pairs: "after" is inclusive, "before" exclusive, and must come later.
TIME_RANGES = (("started_after", "started_before"), ("ended_after", "ended_before"))


@dataclass(frozen=True)
class Filters:
    agent: str = ""
    workflow: str = ""
    person: str = ""
    role: str = ""
    status: str = ""
    lifecycle: str = ""
    source_format: str = ""
    topic: str = ""
    entity_type: str = ""
    entity: str = ""
    started_after: datetime | None = None
    started_before: datetime | None = None
    ended_after: datetime | None = None
    ended_before: datetime | None = None
    min_priority: float | None = None
    exclude_session_ids: tuple[int, ...] = ()
    # Not a request parameter: search and context leave archived sessions out unless asked
    # (their ``include_archived``); a session list shows them.
    exclude_archived: bool = False

    def __post_init__(self):
        # Agents and entities are stored lowercase (sessions.models, sessions/enrich).
        object.__setattr__(self, "agent", self.agent.strip().lower())
        object.__setattr__(self, "entity", self.entity.strip().lower())
        object.__setattr__(self, "topic", self.topic.strip())

    @property
    def reading_needed(self) -> Reading | None:
        """How much of a session a caller must read for these filters to look at it: a
        filter on its messages or entities needs the content, on its topics the summary
        (docs/visibility.md). Otherwise a list of sessions an admin only sees exist, filtered
        by an entity, would tell what their messages hold. None: metadata only."""
        if self.role or self.entity or self.entity_type:
            return Reading.CONTENT
        return Reading.SUMMARY if self.topic else None

    @property
    def narrows_messages(self) -> bool:
        """A message-level filter: the sessions' counts say nothing about it."""
        return bool(self.role)

    def apply(self, sessions, access: Access | None = None):
        """``sessions`` (a Session queryset) narrowed by these filters; with ``access``, a
        filter on what the caller must read to filter by (``reading_needed``) keeps only
        sessions it reads that far."""
        needed = self.reading_needed
        if access is not None and needed is not None:
            sessions = sessions.filter(access.readable(sessions.model, needed))
        exact = {
            "agent_name": self.agent,
            "workflow": self.workflow,
            "user_name": self.person,
            "status": self.status,
            "lifecycle": self.lifecycle,
            "source_format": self.source_format,
            "started_at__gte": self.started_after,
            "started_at__lt": self.started_before,
            "ended_at__gte": self.ended_after,
            "ended_at__lt": self.ended_before,
            "decay_priority__gte": self.min_priority,
        }
        sessions = sessions.filter(**{k: v for k, v in exact.items() if v})
        if self.topic:
            sessions = sessions.filter(topics__contains=[self.topic])
        if self.role:
            messages = Message.objects.filter(session=OuterRef("pk"), role=self.role)
            sessions = sessions.filter(Exists(messages))
        if self.entity_type or self.entity:
            entities = Entity.objects.filter(session=OuterRef("pk"))
            if self.entity_type:
                entities = entities.filter(type=self.entity_type)
            if self.entity:
                entities = entities.filter(normalized=self.entity)
            sessions = sessions.filter(Exists(entities))
        if self.exclude_session_ids:
            sessions = sessions.exclude(pk__in=self.exclude_session_ids)
        if self.exclude_archived:
            sessions = sessions.exclude(lifecycle=Lifecycle.ARCHIVED)
        return sessions


def _time(help_text: str) -> StorableDateTimeField:
    return StorableDateTimeField(required=False, input_formats=DATE_FORMATS, help_text=help_text)


class FiltersSerializer(PlainInputMixin, serializers.Serializer):
    """The filters of session lists, search, context and the entity list."""

    project = serializers.CharField(required=False, help_text="'team/project' or id")
    agent = serializers.CharField(
        required=False,
        max_length=64,
        help_text="the agent (agent_name); with a person, their character (seed 002's char_id)",
    )
    workflow = serializers.CharField(required=False, max_length=100)
    person = serializers.CharField(
        required=False, max_length=200, help_text="the person the agent worked with"
    )
    role = serializers.ChoiceField(
        choices=MessageRole.choices,
        required=False,
        help_text="who spoke: search finds only their messages, a session list the sessions "
        "where they spoke",
    )
    status = serializers.ChoiceField(choices=SessionStatus.choices, required=False)
    lifecycle = serializers.ChoiceField(choices=Lifecycle.choices, required=False)
    source_format = serializers.ChoiceField(choices=source_formats(), required=False)
    topic = serializers.CharField(required=False, max_length=64)
    entity_type = serializers.ChoiceField(choices=EntityType.choices, required=False)
    entity = serializers.CharField(
        required=False, max_length=500, help_text="sessions that touched it, e.g. src/auth.py"
    )
    started_after = _time("sessions started at or after this time (a date alone: midnight UTC)")
    started_before = _time("sessions started before this time")
    ended_after = _time("sessions that ended at or after this time")
    ended_before = _time("sessions that ended before this time")
    min_priority = serializers.FloatField(
        required=False,
        min_value=0.0,
        max_value=1.0,
        help_text="sessions whose decay priority (0..1: falls with time since they were last "
        "read, rises with reads) is at least this",
    )

    def validate(self, attrs):
        for after, before in TIME_RANGES:
            if attrs.get(after) and attrs.get(before) and attrs[after] >= attrs[before]:
                raise serializers.ValidationError({before: f"must be later than {after}"})
        return attrs

    def filters(self) -> Filters:
        data = self.validated_data
        names = {f.name for f in fields(Filters)}
        return Filters(**{name: value for name, value in data.items() if name in names and value})
