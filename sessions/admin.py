"""Admin for sessions: lifecycle, enrichment state, retrying what failed."""

from django.contrib import admin

from sessions.enrich import pipeline
from sessions.models import Entity, Message, Session
from teams.admin import TeamScopedAdmin


@admin.register(Session)
class SessionAdmin(TeamScopedAdmin):
    list_display = [
        "public_id",
        "project",
        "agent_name",
        "title",
        "status",
        "lifecycle",
        "message_count",
        "enrichment_status",
        "started_at",
        "deleted_at",
    ]
    list_filter = ["status", "lifecycle", "enrichment_status", "source_format", "project"]
    search_fields = ["public_id", "external_id", "title", "agent_name"]
    date_hierarchy = "started_at"
    readonly_fields = [
        "public_id",
        "team",
        "project",
        "message_count",
        "size_bytes",
        "embedding_model",
        "enrichment_error",
        "enrichment_attempts",
        "enriched_at",
        "created_at",
        "updated_at",
    ]
    exclude = ["embedding"]
    list_select_related = ["project", "project__team"]
    actions = ["retry_enrichment"]

    @admin.action(description="Retry failed enrichment (sessions and their messages)")
    def retry_enrichment(self, request, queryset):
        sessions = pipeline.retry_failed(queryset)
        messages = pipeline.retry_failed(Message.objects.filter(session__in=queryset))
        self.message_user(request, f"Re-queued {sessions} session(s) and {messages} message(s).")


@admin.register(Message)
class MessageAdmin(TeamScopedAdmin):
    list_display = ["session", "seq", "role", "author", "enrichment_status", "timestamp"]
    list_filter = ["enrichment_status", "role"]
    raw_id_fields = ["session"]
    readonly_fields = [
        "team",
        "search_vector",
        "context_vector",
        "ranking_vector",
        "enrichment_error",
        "enrichment_attempts",
    ]
    actions = ["retry_enrichment"]

    @admin.action(description="Retry failed embedding")
    def retry_enrichment(self, request, queryset):
        self.message_user(request, f"Re-queued {pipeline.retry_failed(queryset)} message(s).")


@admin.register(Entity)
class EntityAdmin(TeamScopedAdmin):
    list_display = ["type", "value", "session", "count"]
    list_filter = ["type"]
    search_fields = ["value", "normalized"]
    raw_id_fields = ["session", "message"]
