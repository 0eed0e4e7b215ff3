"""Shapes of the sessions API's answers that no model serializer describes, for the OpenAPI
schema (the views build these bodies themselves)."""

from rest_framework import serializers

from sessions.api.serializers import MessageSerializer, SessionSerializer


class CaptureResultSerializer(SessionSerializer):
    """The captured session, and what this request added to it."""

    messages_added = serializers.IntegerField(help_text="messages stored by this request")
    duplicates_skipped = serializers.IntegerField(
        help_text="messages the session already held (by client_id or position)"
    )

    class Meta(SessionSerializer.Meta):
        fields = [*SessionSerializer.Meta.fields, "messages_added", "duplicates_skipped"]
        read_only_fields = fields


class AppendResultSerializer(serializers.Serializer):
    session = serializers.CharField(help_text="the session's id")
    messages_added = serializers.IntegerField()
    duplicates_skipped = serializers.IntegerField(
        help_text="messages not stored again: the session already holds their client_id"
    )
    messages = MessageSerializer(many=True, help_text="the messages added, in order")
