from django.urls import path

from web.views import (
    anonymize,
    bulk,
    deletions,
    home,
    memories,
    memories_export,
    memory_review,
    memory_trash,
    people,
    project_archive,
    removal,
    search,
    session,
    sessions,
    tokens,
    trash,
    visibility,
)

app_name = "web"


urlpatterns = [
    path("", home.home, name="home"),
    path("switch", home.switch, name="switch"),
    path("dashboard/enrichment", home.enrichment, name="enrichment"),
    path("dashboard/retry", home.retry_failures, name="retry-failures"),
    path("sessions", sessions.session_list, name="sessions"),
    path("sessions/bulk-delete", bulk.bulk_delete, name="bulk-delete"),
    path("trash/restore", bulk.bulk_restore, name="bulk-restore"),
    path("sessions/visibility", visibility.bulk_visibility, name="bulk-visibility"),
    path("sessions/<str:public_id>", session.session_detail, name="session"),
    path("sessions/<str:public_id>/messages", session.session_messages, name="messages"),
    path(
        "sessions/<str:public_id>/messages/<int:seq>/remove",
        removal.message_remove,
        name="message-remove",
    ),
    path("sessions/<str:public_id>/similar", session.session_similar, name="similar"),
    path("sessions/<str:public_id>/export", session.session_export, name="export"),
    path("sessions/<str:public_id>/delete", session.session_delete, name="delete"),
    path(
        "sessions/<str:public_id>/visibility",
        visibility.session_visibility,
        name="session-visibility",
    ),
    path("sessions/<str:public_id>/messages/<int:seq>/pin", session.message_pin, name="pin"),
    path("sessions/<str:public_id>/anonymize", anonymize.session_anonymize, name="anonymize"),
    path("sessions/<str:public_id>/restore", trash.session_restore, name="restore"),
    path("sessions/<str:public_id>/purge", trash.session_purge, name="purge"),
    path("memories", memories.memory_list, name="memories"),
    path("memories/export", memories_export.memories_export, name="memories-export"),
    path("memories/review", memory_review.review_queue, name="memory-review"),
    path("memories/rejections", memory_review.rejections, name="memory-rejections"),
    path("memories/bulk-delete", memory_trash.memory_bulk_delete, name="memory-bulk-delete"),
    path("memories/<int:project_id>/<str:public_id>", memories.memory_detail, name="memory"),
    path(
        "memories/<int:project_id>/<str:public_id>/edit", memories.memory_edit, name="memory-edit"
    ),
    path(
        "memories/<int:project_id>/<str:public_id>/resolve",
        memories.memory_resolve,
        name="memory-resolve",
    ),
    path("memories/<int:project_id>/<str:public_id>/pin", memories.memory_pin, name="memory-pin"),
    path(
        "memories/<int:project_id>/<str:public_id>/visibility",
        memories.memory_visibility_view,
        name="memory-visibility",
    ),
    path(
        "memories/<int:project_id>/<str:public_id>/status",
        memory_review.memory_status,
        name="memory-status",
    ),
    path(
        "memories/<int:project_id>/<str:public_id>/delete",
        memories.memory_delete,
        name="memory-delete",
    ),
    path("people", people.people_list, name="people"),
    # A person's name may hold "/": the download's pattern is tried first.
    path("people/<path:person>/diary.zip", people.person_diary_export, name="person-export"),
    path("people/<path:person>", people.person_diary, name="person"),
    path("search", search.search_page, name="search"),
    path("trash", trash.trash, name="trash"),
    path("trash/memories", memory_trash.memory_trash, name="memory-trash"),
    path(
        "trash/memories/restore",
        memory_trash.memory_restore_selected,
        name="memory-restore-selected",
    ),
    path(
        "trash/memories/<int:project_id>/<str:public_id>/restore",
        memory_trash.memory_restore,
        name="memory-restore",
    ),
    path("deletions", deletions.deletions, name="deletions"),
    path("tokens", tokens.tokens, name="tokens"),
    path("project-archive", project_archive.project_archive, name="project-archive"),
    path(
        "project-archive/<int:project_id>.zip",
        project_archive.project_archive_download,
        name="project-archive-download",
    ),
    path("tokens/<int:pk>/revoke", tokens.token_revoke, name="token-revoke"),
]
