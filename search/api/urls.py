from django.urls import path

from search.api.views import (
    ContextView,
    EntitiesView,
    ResumeView,
    SearchView,
    SimilarSessionsView,
)

urlpatterns = [
    path("search", SearchView.as_view(), name="search"),
    path("context", ContextView.as_view(), name="context"),
    path("entities", EntitiesView.as_view(), name="entities"),
    path("sessions/<str:id>/similar", SimilarSessionsView.as_view(), name="session-similar"),
    path("sessions/<str:id>/resume", ResumeView.as_view(), name="session-resume"),
]
