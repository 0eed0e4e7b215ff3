from django.urls import path
from rest_framework.routers import SimpleRouter

from search.api.aliases import SpeakerAliasViewSet
from search.api.views import ContextView, EntitiesView, SearchView, SessionSearchViewSet

router = SimpleRouter(trailing_slash=False)
router.register("aliases", SpeakerAliasViewSet, basename="alias")
# /sessions/{id}/similar and /resume: only detail actions, so no other /sessions route.
router.register("sessions", SessionSearchViewSet, basename="session")
urlpatterns = [
    path("search", SearchView.as_view(), name="search"),
    path("context", ContextView.as_view(), name="context"),
    path("entities", EntitiesView.as_view(), name="entities"),
    *router.urls,
]
