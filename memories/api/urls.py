from django.urls import path
from rest_framework.routers import SimpleRouter

from memories.api.people import DiaryExportView, DiaryView, PersonRecentView
from memories.api.views import AgentStateView, MemoryViewSet

router = SimpleRouter(trailing_slash=False)
router.register("memories", MemoryViewSet, basename="memory")

urlpatterns = [
    path("agent-states/<str:agent>", AgentStateView.as_view(), name="agent-state"),
    path("people/<str:person>/recent", PersonRecentView.as_view(), name="person-recent"),
    path("diary", DiaryView.as_view(), name="diary"),
    path("diary/export", DiaryExportView.as_view(), name="diary-export"),
    *router.urls,
]
