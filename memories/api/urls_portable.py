"""Memory files in and out: /api/v1/memories/export, /api/v1/memories/import."""

from django.urls import path

from memories.api.portable import ExportView, ImportView

urlpatterns = [
    path("memories/export", ExportView.as_view(), name="memory-files-export"),
    path("memories/import", ImportView.as_view(), name="memory-files-import"),
]
