from django.urls import path

from search.api.views import ContextView, EntitiesView, SearchView

# /sessions/{id}/similar and /resume are actions of the sessions viewset (sessions.api.urls).
urlpatterns = [
    path("search", SearchView.as_view(), name="search"),
    path("context", ContextView.as_view(), name="context"),
    path("entities", EntitiesView.as_view(), name="entities"),
]
