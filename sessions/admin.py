"""Admin for sessions: lifecycle, enrichment state, retrying what failed.

The lifecycle is changed by the actions, which go through the lifecycle (archiving drops the
message vectors, bringing back embeds them again), never by editing the column; edited text
is redacted as capture redacts it."""

from types import SimpleNamespace

from django.contrib import admin

from sessions import policy_admin  # noqa: F401 (registers the Project admin)
from sessions.capture.session_text import TEXT_FIELDS, redact_session_text
from sessions.enrich import pipeline
from sessions.forget.archive import set_lifecycle
from sessions.forget.lifecycle import LifecycleConflict
from sessions.models import Entity, Lifecycle, Message, Session
from teams.access import Access, Reading
from teams.admin import TeamScopedAdmin

# What an admin who does not read a session's content is not shown of it (its messages,
# in the message admin, are not in their list at all).
CONTENT_FIELDS = ("summary", "topics", "artifacts", "metadata", "enrichment_error")


@admin.register(Session)
class SessionAdmin(TeamScopedAdmin):
    admin_reading = Reading.LISTED
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
        "lifecycle",
        "archived_at",
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
    actions = ["retry_enrichment", "archive", "bring_back"]

    def get_exclude(self, request, obj=None):
        excluded = list(super().get_exclude(request, obj) or [])
        if obj is not None and not request.user.is_superuser:
            access = Access.for_request(SimpleNamespace(user=request.user))
            if access.reading(obj) != Reading.CONTENT:
                excluded += CONTENT_FIELDS
        return excluded

    def get_readonly_fields(self, request, obj=None):
        hidden = set(self.get_exclude(request, obj) or [])
        return [f for f in super().get_readonly_fields(request, obj) if f not in hidden]

    def save_model(self, request, obj, form, change):
        text = {name: getattr(obj, name) for name in TEXT_FIELDS if name in form.changed_data}
        redact_session_text(obj.project, text)
        for name, value in text.items():
            setattr(obj, name, value)
        super().save_model(request, obj, form, change)

    def _set_lifecycle(self, request, queryset, value: str) -> None:
        changed, refused = 0, []
        for session in queryset.select_related("project"):
            try:
                changed += set_lifecycle(session, value, by=request.user)
            except LifecycleConflict:
                refused.append(session.public_id)
        note = f"; in the trash, restore first: {', '.join(refused)}" if refused else ""
        self.message_user(request, f"{changed} session(s) now {value}{note}.")

    @admin.action(description="Archive now (drops the message vectors)")
    def archive(self, request, queryset):
        self._set_lifecycle(request, queryset, Lifecycle.ARCHIVED)

    @admin.action(description="Bring back from the archive (embeds the messages again)")
    def bring_back(self, request, queryset):
        self._set_lifecycle(request, queryset, Lifecycle.ACTIVE)

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
