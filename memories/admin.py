"""Admin for memories: what was recorded, where extraction stands, retrying what failed."""

from django.contrib import admin

from memories.diary.models import DiaryEntry
from memories.models import Memory, MemoryExtraction, MemoryLink
from sessions.models import EnrichmentStatus
from teams.admin import TeamScopedAdmin


@admin.register(Memory)
class MemoryAdmin(TeamScopedAdmin):
    list_display = [
        "public_id",
        "project",
        "type",
        "short_content",
        "status",
        "resolution",
        "agent",
        "person",
        "shared",
        "origin",
        "priority",
        "occurred_at",
    ]
    list_filter = ["type", "status", "resolution", "origin", "scope", "pinned", "shared", "project"]
    search_fields = ["public_id", "content", "topic", "agent", "person"]
    date_hierarchy = "occurred_at"
    raw_id_fields = ["session", "created_by", "deleted_by"]
    readonly_fields = [
        "team",
        "project",
        "public_id",
        "fingerprint",
        "access_count",
        "last_accessed_at",
        "created_at",
        "updated_at",
    ]
    exclude = ["embedding"]
    list_select_related = ["project", "project__team"]

    @admin.display(description="content")
    def short_content(self, memory: Memory) -> str:
        return memory.content[:80]


@admin.register(MemoryLink)
class MemoryLinkAdmin(TeamScopedAdmin):
    list_display = ["source", "kind", "target", "created_at"]
    list_filter = ["kind"]
    raw_id_fields = ["source", "target"]


@admin.register(MemoryExtraction)
class MemoryExtractionAdmin(TeamScopedAdmin):
    list_display = ["session", "status", "through_seq", "method", "attempts", "extracted_at"]
    list_filter = ["status", "method"]
    raw_id_fields = ["session"]
    readonly_fields = ["team", "error", "attempts", "extracted_at", "updated_at"]
    actions = ["retry"]

    @admin.action(description="Retry failed extraction now")
    def retry(self, request, queryset):
        count = queryset.filter(status=EnrichmentStatus.FAILED).update(
            status=EnrichmentStatus.PENDING, attempts=0, error=""
        )
        self.message_user(request, f"Re-queued {count} extraction(s).")


@admin.register(DiaryEntry)
class DiaryEntryAdmin(TeamScopedAdmin):
    """Diaries are written by distillation (memories/diary/distill.py): read-only here."""

    list_display = ["person", "character", "day", "project", "method", "updated_at"]
    list_filter = ["method", "project"]
    search_fields = ["person", "character", "text"]
    date_hierarchy = "day"
    exclude = ["embedding"]
    readonly_fields = [
        "team",
        "project",
        "person",
        "character",
        "day",
        "happened",
        "decisions",
        "preferences",
        "open_threads",
        "facts",
        "sessions",
        "text",
        "method",
        "created_at",
        "updated_at",
    ]
    list_select_related = ["project", "project__team"]

    def has_add_permission(self, request) -> bool:
        return False
