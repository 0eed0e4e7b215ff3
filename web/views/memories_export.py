"""Downloading a project's or a session's memories as a zip of YAML files."""

from __future__ import annotations

from django.http import Http404
from django.views.decorators.http import require_GET

from memories.api.portable import export_response
from teams.models import Role
from web.scope import Workspace, team_required
from web.views.util import session_with_role


@team_required
@require_GET
def memories_export(request):
    """?session=<public id> for a session's memories, else ?project=<id> (or the project
    picked in the header) for a project's. Another team's is a 404; only the memories the
    caller reads are in it (``Access.scope``)."""
    workspace = Workspace.of(request)
    if public_id := request.GET.get("session"):
        session = session_with_role(request, public_id, Role.MEMBER)
        return export_response(session.project, session, access=workspace.access)
    wanted = request.GET.get("project", "")
    if wanted:
        project = (
            workspace.access.projects().filter(pk=int(wanted)).first() if wanted.isdigit() else None
        )
    else:
        project = workspace.project
    if project is None:
        raise Http404("No such project.")
    workspace.require(Role.MEMBER, project.team_id)
    return export_response(project, None, access=workspace.access)
