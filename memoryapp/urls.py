"""URL map: admin, health, the REST API with its OpenAPI schema, and the UI."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularSwaggerSplitView

from mcp_server.views import mcp_endpoint
from memoryapp.health import healthz
from memoryapp.schema_view import SchemaView

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("memories.api.urls_portable")),  # before memories/<id> routes
    path("api/v1/", include("search.api.urls")),
    path("api/v1/", include("sessions.api.urls")),
    path("api/v1/", include("memories.api.urls")),
    path("api/schema/", SchemaView.as_view(), name="api-schema"),
    # Swagger UI from the app's static files; the split view serves its start-up script as a
    # file of its own (?script), and our template drops the inline style: no inline code.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api-schema", template_name="api/swagger_ui.html"
        ),
        name="api-docs",
    ),
    # MCP over Streamable HTTP, with the API's tokens (mcp_server/views.py).
    path("mcp", mcp_endpoint, name="mcp"),
    path("accounts/", include("web.account_urls")),
    path("", include("web.urls")),
]

# JSON under /api/ (and /healthz), the UI's pages elsewhere; a database outage is a 503.
handler400 = "core.api_errors.bad_request"
handler403 = "core.api_errors.permission_denied"
handler404 = "core.api_errors.page_not_found"
handler500 = "core.api_errors.server_error"
