from django.urls import path
from rest_framework.routers import SimpleRouter

from sessions.api.anonymize import AnonymizeJobView, ProjectAnonymizeView
from sessions.api.deletions import DeletionRecordViewSet
from sessions.api.retention import RetentionView
from sessions.api.views import EventsView, ImportView, PipelineView, SessionViewSet
from sessions.api.visibility import SessionVisibilityView

router = SimpleRouter(trailing_slash=False)
router.register("sessions", SessionViewSet, basename="session")
router.register("deletions", DeletionRecordViewSet, basename="deletion")

urlpatterns = [
    # before the router's sessions/{id}, which would take "visibility" for an id
    path("sessions/visibility", SessionVisibilityView.as_view(), name="sessions-visibility"),
    path("import", ImportView.as_view(), name="import"),
    path("events", EventsView.as_view(), name="events"),
    path("pipeline", PipelineView.as_view(), name="pipeline"),
    path("retention", RetentionView.as_view(), name="retention"),
    path("anonymize", ProjectAnonymizeView.as_view(), name="anonymize"),
    path("anonymize/<str:job>", AnonymizeJobView.as_view(), name="anonymize-job"),
    *router.urls,
]
