"""What the sessions API reads and writes. Input serializers produce the importers'
``ParsedSession``/``ParsedMessage``, so the REST API and the importers share one capture path."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import cache

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.core.validators import MaxLengthValidator, ProhibitNullCharactersValidator
from django.db import models, transaction
from rest_framework import serializers
from rest_framework.utils.formatting import lazy_format

from core.plain_input import PlainInputMixin
from sessions import visibility
from sessions.capture.session_text import redact_session_text
from sessions.forget.archive import NOT_SETTABLE, set_lifecycle
from sessions.forget.archive import SETTABLE as SETTABLE_LIFECYCLES
from sessions.forget.lifecycle import recovery_deadline
from sessions.forget.messages import tombstone_text
from sessions.models import API_SOURCE, Lifecycle, Message, MessageRole, Session, SessionStatus
from teams.access import Reading
from teams.models import Visibility
from transcripts import parse
from transcripts.base import (
    ImportFormatError,
    ParsedMessage,
    ParsedSession,
    UnzipLimits,
)
from transcripts.formats.plain_text import NAME as PLAIN_TEXT
from transcripts.sanitize import clean_json, clean_surrogates

MAX_TOPICS = 50
# PostgreSQL's timestamptz takes offsets up to ±15:59; Python parses up to ±23:59.
MAX_UTC_OFFSET = timedelta(hours=16)


def validate_utc_offset(value: datetime) -> None:
    """Refuse a time whose UTC offset PostgreSQL cannot take ("…T00:00:00-22:18")."""
    offset = value.utcoffset()
    if offset is not None and abs(offset) >= MAX_UTC_OFFSET:
        minutes = int(abs(offset).total_seconds()) // 60
        sent = f"{'-' if offset < timedelta(0) else '+'}{minutes // 60:02}:{minutes % 60:02}"
        raise ValidationError(
            f"the time zone offset {sent} is out of range: use one between -15:59 and "
            "+15:59, or Z for UTC"
        )


class StorableDateTimeField(serializers.DateTimeField):
    """A DateTimeField that checks the offset as sent (DRF converts to UTC right after)."""

    def enforce_timezone(self, value):
        try:
            validate_utc_offset(value)
        except ValidationError as exc:
            raise serializers.ValidationError(exc.messages) from None
        return super().enforce_timezone(value)


def validate_storable_json(value) -> None:
    """jsonb holds UTF-8: a lone surrogate (a "\\ud800" escape without its pair) cannot be
    stored."""
    _, found = clean_json(value, clean_surrogates)
    if found:
        raise ValidationError(
            f"{found} lone surrogate character(s) (a \\ud800-\\udfff escape without its "
            "pair) cannot be stored; send the pair or remove them"
        )


@cache
def column_lengths(model: type[models.Model]) -> dict[str, int]:
    """The ``max_length`` of ``model``'s string columns (for an array of strings, of its
    items), by field name: the one source of the limits below."""
    lengths = {}
    for field in model._meta.concrete_fields:
        column = field.base_field if isinstance(field, ArrayField) else field
        if isinstance(column, models.CharField) and column.max_length:
            lengths[field.name] = column.max_length
    return lengths


def _bind_max_length(field: serializers.CharField, limit: int) -> None:
    if field.max_length is not None and field.max_length <= limit:
        return
    field.max_length = limit
    message = lazy_format(field.error_messages["max_length"], max_length=limit)
    field.validators.append(MaxLengthValidator(limit, message=message))


class StorableFieldsMixin:
    """Input fields checked against the model field of the same name, so that what passes
    validation can be stored: a string's ``max_length`` (a longer one would fail in
    PostgreSQL, a 500 instead of a 400 naming the field), a list of strings' item length,
    and no lone surrogates in JSON. The model is the one source of these limits; fields
    that set a smaller ``max_length`` keep it."""

    storage_model: type[models.Model]

    def get_fields(self):
        fields = super().get_fields()
        lengths = column_lengths(self.storage_model)
        for name, field in fields.items():
            source = field.source or name
            if source in lengths:
                target = field.child if isinstance(field, serializers.ListField) else field
                if isinstance(target, serializers.CharField):
                    _bind_max_length(target, lengths[source])
            elif isinstance(field, serializers.DictField) and _is_json_column(
                self.storage_model, source
            ):
                field.validators.append(validate_storable_json)
        return fields


def _is_json_column(model: type[models.Model], name: str) -> bool:
    try:
        return isinstance(model._meta.get_field(name), models.JSONField)
    except FieldDoesNotExist:
        return False


def unzip_limits() -> UnzipLimits:
    """How far an imported archive may expand, from the settings (IMPORT_UNZIP_*)."""
    return UnzipLimits(
        member_bytes=settings.IMPORT_UNZIP_MAX_MEMBER_BYTES,
        total_bytes=settings.IMPORT_UNZIP_MAX_BYTES,
        ratio=settings.IMPORT_UNZIP_MAX_RATIO,
    )


# What names a session or message: cut to fit, it would become another one (an idempotency
# key, an agent, a workflow filter). Free text (title, persona, author, …) capture cuts to fit.
IDENTITY_FIELDS = {Session: ("external_id", "agent_name", "workflow"), Message: ("client_id",)}


def check_parsed_lengths(sessions: list[ParsedSession]) -> None:
    """What an importer read, against the same column lengths as the API's input: an
    identifying value too long to store is an ``ImportFormatError`` naming it (a 400)."""
    for number, session in enumerate(sessions, 1):
        _check_lengths(session, Session, f"session {number}", "")
        for index, message in enumerate(session.messages):
            _check_lengths(message, Message, f"session {number}", f"messages[{index}].")


def _check_lengths(record, model: type[models.Model], where: str, prefix: str) -> None:
    for name in IDENTITY_FIELDS[model]:
        value, limit = getattr(record, name), column_lengths(model)[name]
        if len(value) > limit:
            raise ImportFormatError(
                f"{len(value):,} characters in {where}; at most {limit} can be stored",
                field=f"{prefix}{name}",
            )


class CsvOrListField(serializers.ListField):
    """Agents send lists as CSV strings ("auth,db") or as lists; accept both."""

    def to_internal_value(self, data):
        if isinstance(data, str):
            data = [part.strip() for part in data.split(",") if part.strip()]
        return super().to_internal_value(data)


class TranscriptTextField(serializers.CharField):
    """Text as agents send it. NUL characters are allowed in: capture removes them (docs/api.md's
    preprocessing; PostgreSQL cannot store them) and records how many in the metadata."""

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)
        self.validators = [
            v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)
        ]


class MessageInSerializer(StorableFieldsMixin, PlainInputMixin, serializers.Serializer):
    storage_model = Message

    role = serializers.ChoiceField(choices=MessageRole.choices)
    content = TranscriptTextField(allow_blank=True)
    author = serializers.CharField(required=False, allow_blank=True, default="")
    timestamp = serializers.DateTimeField(required=False, allow_null=True, default=None)
    tool_name = serializers.CharField(required=False, allow_blank=True, default="")
    tool_call_id = serializers.CharField(required=False, allow_blank=True, default="")
    client_id = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="Your id for this message: a retried append with the same id is stored once.",
    )
    metadata = serializers.DictField(required=False, default=dict)

    def to_parsed(self, data: dict) -> ParsedMessage:
        return ParsedMessage(**data)


class SessionCaptureSerializer(StorableFieldsMixin, PlainInputMixin, serializers.Serializer):
    storage_model = Session

    project = serializers.CharField(
        required=False,
        help_text="'team/project' slugs or the project's id. Not needed with an API token.",
    )
    external_id = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=255,
        default="",
        help_text="Your id for the session. Sending it again returns the same session and "
        "appends only the messages it does not hold yet.",
    )
    agent_name = serializers.CharField(max_length=64)
    agent_persona = serializers.CharField(required=False, allow_blank=True, default="")
    # No defaults here: a field left out of a re-sent session keeps its stored value (a new
    # session gets capture's defaults: workflow "none", status "completed").
    workflow = serializers.CharField(required=False, allow_blank=True)
    title = serializers.CharField(required=False, allow_blank=True, default="")
    user_name = serializers.CharField(required=False, allow_blank=True, default="")
    status = serializers.ChoiceField(choices=SessionStatus.choices, required=False)
    started_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    ended_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    topics = CsvOrListField(
        child=serializers.CharField(max_length=64), required=False, default=list
    )
    artifacts = CsvOrListField(
        child=serializers.CharField(max_length=500), required=False, default=list
    )
    metadata = serializers.DictField(required=False, default=dict)
    visibility = serializers.ChoiceField(
        choices=Visibility.choices,
        required=False,
        help_text="Who reads a new session: 'private' (you only), 'summary' (the team reads "
        "its title, summary, topics and accepted memories) or 'team'. Default: the token's, "
        "else the project's. A session sent again keeps its own.",
    )
    messages = MessageInSerializer(many=True, required=False)
    conversation = TranscriptTextField(
        required=False,
        help_text='The raw log instead of messages: "User: ...\\nAssistant: ..."; a line '
        'starting with "User:", "Assistant:", "System:" or "Tool:" opens a message.',
    )

    def validate_topics(self, value):
        if len(value) > MAX_TOPICS:
            raise serializers.ValidationError(f"at most {MAX_TOPICS} topics")
        return value

    def validate_conversation(self, value):
        try:
            self._conversation = parse(value.encode(), format="plain_text")[0].messages
        except ImportFormatError as exc:
            raise serializers.ValidationError(str(exc)) from None
        return value

    def validate(self, attrs):
        if "messages" in attrs and "conversation" in attrs:
            raise serializers.ValidationError(
                {"conversation": "send either 'messages' or 'conversation', not both"}
            )
        started, ended = attrs.get("started_at"), attrs.get("ended_at")
        if started and ended and ended < started:
            raise serializers.ValidationError({"ended_at": "is before started_at"})
        return attrs

    def to_parsed(self) -> ParsedSession:
        data = dict(self.validated_data)
        data.pop("project", None)
        data.pop("visibility", None)
        conversation = data.pop("conversation", None)
        if conversation is not None:
            messages = self._conversation
            source = PLAIN_TEXT
        else:
            messages = [ParsedMessage(**m) for m in data.pop("messages", [])]
            source = API_SOURCE
        data.pop("messages", None)
        return ParsedSession(source_format=source, messages=messages, **data)


class AppendMessagesSerializer(PlainInputMixin, serializers.Serializer):
    messages = MessageInSerializer(many=True, allow_empty=False)

    def to_parsed(self) -> list[ParsedMessage]:
        return [ParsedMessage(**m) for m in self.validated_data["messages"]]


class MessageSerializer(serializers.ModelSerializer):
    """A message; a removed one is a tombstone: empty content, with ``removed_at`` and
    ``removed_by`` (who removed it) set and ``removed`` saying so in words."""

    removed = serializers.SerializerMethodField(
        help_text="for a removed message, e.g. 'removed by alice on 2025-01-15'; else null"
    )

    class Meta:
        model = Message
        fields = [
            "seq",
            "client_id",
            "role",
            "author",
            "content",
            "tool_name",
            "tool_call_id",
            "timestamp",
            "token_count",
            "metadata",
            "pinned",
            "enrichment_status",
            "removed_at",
            "removed_by",
            "removed",
        ]
        read_only_fields = fields

    def get_removed(self, message) -> str | None:
        return tombstone_text(message)


class QuotaSerializer(serializers.Serializer):
    """The session against its project's quota, after this request."""

    used_bytes = serializers.IntegerField(help_text="bytes of message text the session holds")
    quota_bytes = serializers.IntegerField(help_text="the project's session quota")
    percent = serializers.FloatField(help_text="used_bytes as a share of quota_bytes")
    state = serializers.ChoiceField(
        choices=["ok", "warning", "compacted"],
        help_text="ok; warning: past the project's warning share; compacted: this request "
        "compacted the session first to make room",
    )
    bytes_freed = serializers.IntegerField(help_text="what compaction freed (0 if none ran)")


# What a caller who may not read a session's content is not shown of it (docs/visibility.md):
# a 'summary' session's team reads its title, summary and topics; an admin looking at a
# teammate's private session, only that it exists (title, owner, dates, size, lifecycle).
WITHHELD = {
    Reading.SUMMARY: {"artifacts": [], "metadata": {}},
    Reading.LISTED: {"artifacts": [], "metadata": {}, "summary": "", "topics": []},
}


class SessionSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="public_id", read_only=True)
    project = serializers.SerializerMethodField()
    recovery_deadline = serializers.SerializerMethodField()
    owner = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,  # the schema says null may come (a session of the team)
        help_text="The person whose session it is; null: the team's.",
    )
    reading = serializers.SerializerMethodField(
        help_text="How much of it you read: 'content' (all), 'summary' (its title, summary "
        "and topics, not its messages) or 'listed' (only that it exists: an admin looking "
        "at a teammate's private session)."
    )

    class Meta:
        model = Session
        fields = [
            "id",
            "external_id",
            "project",
            "agent_name",
            "agent_persona",
            "workflow",
            "title",
            "user_name",
            "source_format",
            "status",
            "lifecycle",
            "started_at",
            "ended_at",
            "message_count",
            "size_bytes",
            "topics",
            "artifacts",
            "metadata",
            "summary",
            "enrichment_status",
            "created_at",
            "updated_at",
            "deleted_at",
            "recovery_deadline",
            "owner",
            "visibility",
            "reading",
        ]
        read_only_fields = fields

    def _reading(self, session) -> Reading:
        access = self.context.get("access")
        return Reading.CONTENT if access is None else access.reading(session)

    def get_reading(self, session) -> str:
        return str(self._reading(session))

    def to_representation(self, session):
        data = super().to_representation(session)
        data.update(WITHHELD.get(self._reading(session), {}))
        return data

    def get_project(self, session) -> str:
        return f"{session.project.team.slug}/{session.project.slug}"

    def get_recovery_deadline(self, session) -> str | None:
        deadline = recovery_deadline(session)
        return deadline.isoformat() if deadline else None


class SessionPatchSerializer(StorableFieldsMixin, PlainInputMixin, serializers.Serializer):
    """Fields a person or agent may change after capture. ``metadata`` is merged key by key;
    a key set to null is removed; NUL characters are removed from it, as capture does. The
    text is redacted as capture redacts it (``session_text.py``); ``lifecycle`` goes through
    the lifecycle (``archive.set_lifecycle``), so archiving drops the message vectors and
    'active' brings them back."""

    storage_model = Session

    title = serializers.CharField(required=False, allow_blank=True)
    agent_persona = serializers.CharField(required=False, allow_blank=True)
    workflow = serializers.CharField(required=False)
    status = serializers.ChoiceField(choices=SessionStatus.choices, required=False)
    lifecycle = serializers.ChoiceField(
        choices=[(value, Lifecycle(value).label) for value in SETTABLE_LIFECYCLES],
        required=False,
        error_messages={"invalid_choice": f"'{{input}}' cannot be set: {NOT_SETTABLE}."},
        help_text="'archived' archives the session now (its message vectors are dropped); "
        "'active' brings an archived one back (its messages are embedded again). 'idle' and "
        "'decaying' are set by the decay, not by hand.",
    )
    topics = CsvOrListField(child=serializers.CharField(), required=False)
    artifacts = CsvOrListField(child=serializers.CharField(), required=False)
    metadata = serializers.DictField(required=False)
    visibility = serializers.ChoiceField(
        choices=Visibility.choices,
        required=False,
        help_text="Who reads it: its owner sets any visibility the project allows; an admin "
        "may only make it less visible.",
    )

    def validate_metadata(self, value):
        return clean_json(value)[0]

    def validate(self, attrs):
        access = self.context.get("access")
        edits = set(attrs) - {"visibility", "lifecycle"}
        if edits and access is not None and access.reading(self.instance) != Reading.CONTENT:
            raise serializers.ValidationError(
                {
                    name: "only the session's owner edits a session you do not read"
                    for name in sorted(edits)
                }
            )
        return attrs

    def update(self, session: Session, validated_data: dict) -> Session:
        lifecycle = validated_data.pop("lifecycle", None)
        new_visibility = validated_data.pop("visibility", None)
        redact_session_text(session.project, validated_data)
        metadata = validated_data.pop("metadata", None)
        with transaction.atomic():  # a refused lifecycle (in the trash) changes nothing
            if metadata is not None:
                merged = {**session.metadata, **metadata}
                session.metadata = {k: v for k, v in merged.items() if v is not None}
                validated_data["metadata"] = session.metadata
            for name, value in validated_data.items():
                setattr(session, name, value)
            if validated_data:
                session.save(update_fields=[*validated_data, "updated_at"])
            if lifecycle is not None:
                set_lifecycle(session, lifecycle, by=self.context.get("by"))
            if new_visibility is not None:
                visibility.change(self.context["access"], [session], new_visibility)
        return session


class LengthField(serializers.IntegerField):
    """How many items a list attribute holds."""

    def to_representation(self, value) -> int:
        return len(value)


class ImportedSessionSerializer(serializers.Serializer):
    """One session the upload created or extended."""

    id = serializers.CharField(source="session.public_id")
    external_id = serializers.CharField(source="session.external_id")
    title = serializers.CharField(source="session.title")
    created = serializers.BooleanField()
    messages_added = LengthField(source="added")
    duplicates_skipped = serializers.IntegerField(source="duplicates")
    message_count = serializers.IntegerField(source="session.message_count")
    quota = QuotaSerializer()
    attachments = serializers.DictField(
        help_text="What each section of our own export beside the messages brought "
        '(``{"memories": {"created": 2, "unchanged": 0, "renumbered": {}}}``); '
        "``skipped_sections`` names sections this instance has no place for."
    )


class ImportResultSerializer(serializers.Serializer):
    format = serializers.CharField()
    sessions = ImportedSessionSerializer(many=True)
    skipped = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="records of the file the importer does not know (a newer version of the "
        "format), skipped: {reason: count}; empty when everything was read",
    )
