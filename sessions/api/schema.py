"""Shapes of the sessions API's answers that no model serializer describes, for the OpenAPI
schema (the views build these bodies themselves)."""

from rest_framework import serializers

from sessions.api.serializers import MessageSerializer, QuotaSerializer, SessionSerializer
from sessions.forget.compaction import STEPS


class CaptureResultSerializer(SessionSerializer):
    """The captured session, and what this request added to it."""

    messages_added = serializers.IntegerField(help_text="messages stored by this request")
    duplicates_skipped = serializers.IntegerField(
        help_text="messages the session already held (by client_id or position)"
    )

    quota = QuotaSerializer()

    class Meta(SessionSerializer.Meta):
        fields = [*SessionSerializer.Meta.fields, "messages_added", "duplicates_skipped", "quota"]
        read_only_fields = fields


class AppendResultSerializer(serializers.Serializer):
    session = serializers.CharField(help_text="the session's id")
    messages_added = serializers.IntegerField()
    duplicates_skipped = serializers.IntegerField(
        help_text="messages not stored again: the session already holds their client_id"
    )
    messages = MessageSerializer(many=True, help_text="the messages added, in order")
    quota = QuotaSerializer()


class PinSerializer(serializers.Serializer):
    pinned = serializers.BooleanField(
        required=False,
        help_text="true keeps the message from ever being compacted; false lets it be; "
        "absent changes nothing",
    )


class CompactRequestSerializer(serializers.Serializer):
    dry_run = serializers.BooleanField(
        default=False, help_text="only say what compaction would free, step by step"
    )


class CompactionStepSerializer(serializers.Serializer):
    step = serializers.ChoiceField(choices=list(STEPS))
    messages = serializers.IntegerField(help_text="messages changed or replaced")
    bytes_freed = serializers.IntegerField()


class CompactionResultSerializer(serializers.Serializer):
    session = serializers.CharField(help_text="the session's id")
    dry_run = serializers.BooleanField()
    bytes_freed = serializers.IntegerField(help_text="the steps' total")
    messages_removed = serializers.IntegerField(
        help_text="messages replaced by a summary (their seqs stay taken)"
    )
    steps = CompactionStepSerializer(many=True, help_text="in the order they run")
    quota = QuotaSerializer(help_text="after compaction (before it, for a dry run)")


class SizeBreakdownSerializer(serializers.Serializer):
    messages_bytes = serializers.IntegerField(help_text="text of all messages but tool output")
    tool_output_bytes = serializers.IntegerField(help_text="text of tool results")
    vectors_bytes = serializers.IntegerField(
        help_text="the message chunks as stored: vectors, their sign bits and embedded text"
    )
    entities_bytes = serializers.IntegerField(help_text="entity values and their context")
    total_bytes = serializers.IntegerField()
    quota = QuotaSerializer(help_text="the quota counts message and tool output text only")
