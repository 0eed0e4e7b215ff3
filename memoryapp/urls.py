"""URL map: admin, health, the REST API with its OpenAPI schema, and the UI."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from memoryapp.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("search.api.urls")),
    path("api/v1/", include("sessions.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # Swagger UI from the app's static files; the split view serves its start-up script as a
    # file of its own (?script), and our template drops the inline style: no inline code.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api-schema", template_name="api/swagger_ui.html"
        ),
        name="api-docs",
    ),
    path("accounts/", include("web.account_urls")),
    path("", include("web.urls")),
]
