"""The header's team and project switcher, on every page."""

from web.scope import Workspace


def navigation(request):
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or request.path.startswith(("/api/", "/admin/")):
        return {}
    return {"workspace": Workspace.of(request)}
