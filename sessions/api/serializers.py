"""What the sessions API reads and writes. Input serializers produce the importers'
``ParsedSession``/``ParsedMessage``, so the REST API and the importers share one capture path."""

from __future__ import annotations

from django.core.validators import ProhibitNullCharactersValidator
from rest_framework import serializers

from sessions.importers import parse
from sessions.importers.base import ImportFormatError, ParsedMessage, ParsedSession
from sessions.models import Lifecycle, Message, Role, Session, SessionStatus, SourceFormat
from sessions.services.lifecycle import recovery_deadline

MAX_TOPICS = 50


class CsvOrListField(serializers.ListField):
    """Seed 000 sends lists as CSV strings ("auth,db"); accept both."""

    def to_internal_value(self, data):
        if isinstance(data, str):
            data = [part.strip() for part in data.split(",") if part.strip()]
        return super().to_internal_value(data)


class TranscriptTextField(serializers.CharField):
    """Text as agents send it. NUL characters are allowed in: capture removes them (seed 000's
    preprocessing; PostgreSQL cannot store them) and records how many in the metadata."""

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)
        self.validators = [
            v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)
        ]


class MessageInSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)
    content = TranscriptTextField(allow_blank=True)
    author = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")
    timestamp = serializers.DateTimeField(required=False, allow_null=True, default=None)
    tool_name = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")
    tool_call_id = serializers.CharField(
        required=False, allow_blank=True, max_length=255, default=""
    )
    client_id = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=255,
        default="",
        help_text="Your id for this message: a retried append with the same id is stored once.",
    )
    metadata = serializers.DictField(required=False, default=dict)

    def to_parsed(self, data: dict) -> ParsedMessage:
        return ParsedMessage(**data)


class SessionCaptureSerializer(serializers.Serializer):
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
    messages = MessageInSerializer(many=True, required=False)
    conversation = TranscriptTextField(
        required=False,
        help_text='The raw log instead of messages: "User: ...\\nAssistant: ..." (seed 000).',
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
        conversation = data.pop("conversation", None)
        if conversation is not None:
            messages = self._conversation
            source = SourceFormat.PLAIN_TEXT
        else:
            messages = [ParsedMessage(**m) for m in data.pop("messages", [])]
            source = SourceFormat.API
        data.pop("messages", None)
        return ParsedSession(source_format=source, messages=messages, **data)


class AppendMessagesSerializer(serializers.Serializer):
    messages = MessageInSerializer(many=True, allow_empty=False)

    def to_parsed(self) -> list[ParsedMessage]:
        return [ParsedMessage(**m) for m in self.validated_data["messages"]]


class MessageSerializer(serializers.ModelSerializer):
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
            "enrichment_status",
        ]
        read_only_fields = fields


class SessionSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="public_id", read_only=True)
    project = serializers.SerializerMethodField()
    recovery_deadline = serializers.SerializerMethodField()

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
        ]
        read_only_fields = fields

    def get_project(self, session) -> str:
        return f"{session.project.team.slug}/{session.project.slug}"

    def get_recovery_deadline(self, session) -> str | None:
        deadline = recovery_deadline(session)
        return deadline.isoformat() if deadline else None


class SessionPatchSerializer(serializers.Serializer):
    """Fields a person or agent may change after capture. ``metadata`` is merged key by key;
    a key set to null is removed."""

    title = serializers.CharField(required=False, allow_blank=True, max_length=300)
    agent_persona = serializers.CharField(required=False, allow_blank=True, max_length=100)
    workflow = serializers.CharField(required=False, max_length=100)
    status = serializers.ChoiceField(choices=SessionStatus.choices, required=False)
    lifecycle = serializers.ChoiceField(choices=Lifecycle.choices, required=False)
    topics = CsvOrListField(child=serializers.CharField(max_length=64), required=False)
    artifacts = CsvOrListField(child=serializers.CharField(max_length=500), required=False)
    metadata = serializers.DictField(required=False)

    def update(self, session: Session, validated_data: dict) -> Session:
        metadata = validated_data.pop("metadata", None)
        if metadata is not None:
            merged = {**session.metadata, **metadata}
            session.metadata = {k: v for k, v in merged.items() if v is not None}
            validated_data["metadata"] = session.metadata
        for name, value in validated_data.items():
            setattr(session, name, value)
        if validated_data:
            session.save(update_fields=[*validated_data, "updated_at"])
        return session


class ImportedSessionSerializer(serializers.Serializer):
    id = serializers.CharField()
    external_id = serializers.CharField()
    title = serializers.CharField()
    created = serializers.BooleanField()
    messages_added = serializers.IntegerField()
    duplicates_skipped = serializers.IntegerField()
    message_count = serializers.IntegerField()


class ImportResultSerializer(serializers.Serializer):
    format = serializers.CharField()
    sessions = ImportedSessionSerializer(many=True)
