"""A project's archive for its team's admins: download one (``sessions/portable/export.py``),
or import one into a project of the current team (``sessions/portable/load.py``). The
management commands do the same for projects too large for one web request."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.contrib import messages
from django.http import FileResponse, Http404
from django.shortcuts import redirect, render
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods

from sessions.capture.service import CaptureError
from sessions.portable.export import write_archive
from sessions.portable.load import import_archive
from sessions.portable.manifest import ArchiveRefused
from teams.models import Project, Role
from transcripts.base import ImportFormatError
from web.scope import Workspace, team_required


@team_required
@require_http_methods(["GET", "POST"])
def project_archive(request):
    workspace = Workspace.of(request)
    workspace.require(Role.ADMIN)
    if request.method == "POST":
        upload, slug = request.FILES.get("archive"), slugify(request.POST.get("project", ""))
        if upload is None or not slug:
            messages.error(request, "Choose an archive and name the project to import it into.")
        else:
            _import(request, workspace, upload, slug)
        return redirect("web:project-archive")
    return render(request, "web/project_archive.html", {"projects": workspace.projects})


def _import(request, workspace, upload, slug: str) -> None:
    existing = Project.objects.filter(team=workspace.team, slug=slug).first()
    target = existing or Project(team=workspace.team, slug=slug, name=slug)
    with tempfile.NamedTemporaryFile(suffix=".zip") as file:
        for chunk in upload.chunks():
            file.write(chunk)
        file.flush()
        try:
            result = import_archive(
                Path(file.name),
                target,
                settings=existing is None,
                prepare=target.save if existing is None else lambda: None,
                access=workspace.access,
            )
        except ArchiveRefused as exc:
            messages.error(request, f"Archive refused, nothing was written: {exc}")
            return
        except (ImportFormatError, CaptureError) as exc:
            messages.error(
                request, f"Import stopped: {exc}. Import the same archive again once fixed."
            )
            return
    messages.success(
        request,
        f"Imported into {target}: {result.sessions_created} new session(s), "
        f"{result.messages_added} new message(s), {result.duplicates} already there.",
    )


@team_required
@require_GET
def project_archive_download(request, project_id: int):
    workspace = Workspace.of(request)
    project = next((p for p in workspace.projects if p.pk == project_id), None)
    if project is None:
        raise Http404("No such project.")
    workspace.require(Role.ADMIN, project.team_id)
    # FileResponse closes the file once it is sent, and a temporary file is then gone.
    file = tempfile.TemporaryFile()  # noqa: SIM115
    # Only what this admin reads (sessions/portable/export.py).
    write_archive(project, file, access=workspace.access)
    file.seek(0)
    name = f"{project.team.slug}-{project.slug}.zip"
    return FileResponse(file, as_attachment=True, filename=name, content_type="application/zip")
