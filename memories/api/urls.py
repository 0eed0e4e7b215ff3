from django.urls import path
from rest_framework.routers import SimpleRouter

from memories.api.views import AgentStateView, MemoryViewSet

router = SimpleRouter(trailing_slash=False)
router.register("memories", MemoryViewSet, basename="memory")

urlpatterns = [
    path("agent-states/<str:agent>", AgentStateView.as_view(), name="agent-state"),
    *router.urls,
]
