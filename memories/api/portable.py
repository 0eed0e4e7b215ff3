"""GET /api/v1/memories/export and POST /api/v1/memories/import: memories as YAML files."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiRequest,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import exceptions, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from core.openapi import error
from memories import visibility as audience
from memories.models import Memory
from memories.portable.export import export_document, export_zip
from memories.portable.load import import_files, read_upload
from memories.portable.schema import MemoryFile
from sessions.api.serializers import unzip_limits
from sessions.api.views import RawBodyParser
from sessions.models import Session
from teams.access import Access
from teams.models import Role, TokenPermission
from teams.viewsets import ScopedAPIView

# One YAML document of memory files: a section per kind (memories/portable/schema.py has
# each entry's fields; the import checks them and names the one in error).
FILE_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        **{
            name: {"type": "array", "items": {"type": "object"}}
            for name in MemoryFile.model_fields
            if name != "agent_state"
        },
        "agent_state": {"type": "object", "nullable": True},
    },
}
PROJECT = OpenApiParameter("project", OpenApiTypes.STR, description="'team/project' or id")


def scope_of(view, params, *, role: str) -> tuple:
    """The project (and session) a request names; another team's is a 404."""
    session = None
    if public_id := params.get("session"):
        session = (
            view.access.scope(Session.objects.alive().select_related("project"))
            .filter(public_id=public_id)
            .first()
        )
        if session is None:
            raise exceptions.NotFound(f"No session {public_id!r}.")
        project = session.project
        named = params.get("project")
        if named and named not in (str(project.pk), f"{project.team.slug}/{project.slug}"):
            raise exceptions.ValidationError(
                {"session": f"session {public_id} is not in project {named!r}"}
            )
        return project, session
    return view.resolve_project(params.get("project") or None, role=role), None


class ExportView(ScopedAPIView):
    """GET /api/v1/memories/export — a project's (or a session's) memories as YAML files."""

    @extend_schema(
        summary="Export memories as YAML files",
        description="The memories of a project, or of one session, with the relationships "
        "between them: a zip of decisions.yaml, findings.yaml, preferences.yaml, "
        "learnings.yaml, facts.yaml, agent-states/<agent>.yaml and relationships.yaml, "
        "or (format=yaml) one YAML document with a section per kind. Deleted memories are "
        "left out; superseded ones are kept as history. POST the files back to "
        "/api/v1/memories/import.",
        parameters=[
            PROJECT,
            OpenApiParameter("session", OpenApiTypes.STR, description="a session's public id"),
            OpenApiParameter("format", OpenApiTypes.STR, enum=["zip", "yaml"], default="zip"),
        ],
        responses={
            (200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY, description="zip"),
            (200, "application/yaml"): OpenApiResponse(FILE_SCHEMA, description="YAML"),
            404: error(404),
        },
    )
    def get(self, request):
        params = request.query_params
        kind = params.get("format") or "zip"
        if kind not in ("zip", "yaml"):
            raise exceptions.ValidationError({"format": "one of: zip, yaml"})
        project, session = scope_of(self, params, role=Role.VIEWER)
        # A download is a member's right for people, but only a read for a token.
        self.require(Role.MEMBER, project.team_id, token_permission=TokenPermission.READ)
        return export_response(project, session, kind, access=self.access)


def export_response(project, session, kind: str = "zip", *, access: Access) -> HttpResponse:
    """The memories of ``project`` (or ``session``) that ``access`` reads, as a download."""
    memories = access.scope(Memory.objects.filter(project=project))
    name = f"memories-{project.slug}"
    if session is not None:
        memories, name = memories.filter(session=session), f"memories-{session.public_id}"
    if kind == "yaml":
        response = HttpResponse(export_document(memories), content_type="application/yaml")
        response["Content-Disposition"] = f'attachment; filename="{name}.yaml"'
    else:
        response = HttpResponse(export_zip(memories), content_type="application/zip")
        response["Content-Disposition"] = f'attachment; filename="{name}.zip"'
    return response


class MemoryImportResultSerializer(serializers.Serializer):
    created = serializers.ListField(child=serializers.CharField(), help_text="ids created")
    unchanged = serializers.ListField(
        child=serializers.CharField(), help_text="ids already there with the same statement"
    )
    renumbered = serializers.DictField(
        child=serializers.CharField(), help_text="a file's id → the id given (it was taken)"
    )
    relationships = serializers.IntegerField(help_text="relationships restored")


class ImportView(ScopedAPIView):
    """POST /api/v1/memories/import — memory files (YAML or a zip of them)."""

    parser_classes = [MultiPartParser, FormParser, RawBodyParser]

    @extend_schema(
        summary="Import memories from YAML files",
        description="Files as exported by /api/v1/memories/export: a zip, or YAML files "
        "(multipart, any number of parts named 'file'), or one YAML document as the body. "
        "All are checked first; an error (invalid YAML, an unknown field, an id given twice, "
        "a turn or relationship naming nothing) answers 400 with the file, entry and field, "
        "and nothing is written. A file's id is kept when the project has none of that id; "
        "otherwise the memory gets the next free one (see 'renumbered'). Importing the same "
        "files again changes nothing. With 'session', every memory goes to that session and "
        "turn_ref names its evidence message (by seq).",
        parameters=[
            PROJECT,
            OpenApiParameter("session", OpenApiTypes.STR, description="a session's public id"),
        ],
        request={
            "multipart/form-data": OpenApiRequest(
                inline_serializer(
                    "MemoryFilesUpload",
                    {"file": serializers.ListField(child=serializers.FileField())},
                ),
                encoding={"file": {"contentType": "application/octet-stream"}},
            ),
            "application/yaml": FILE_SCHEMA,
            "application/zip": OpenApiTypes.BINARY,
        },
        responses={201: MemoryImportResultSerializer, 400: error(400), 404: error(404)},
    )
    def post(self, request):
        project, session = scope_of(self, request.query_params, role=Role.MEMBER)
        self.require(Role.MEMBER, project.team_id)
        files: dict[str, bytes] = {}
        for upload in request.FILES.getlist("file"):
            files.update(read_upload(upload.name, upload.read(), unzip_limits()))
        if not files:
            if request.content_type.startswith("multipart/"):
                raise exceptions.ValidationError({"file": "the multipart field 'file' is missing"})
            if not request.data:
                raise exceptions.ValidationError({"file": "the body is empty: send YAML or a zip"})
            files = read_upload("", request.data, unzip_limits())
        # What an imported memory is recorded as: the importer's, as a memory recorded
        # by them (memories/visibility.py); a file's memories carry no visibility.
        ownership = audience.for_record(self.access, project, None, session)
        result = import_files(project, files, session=session, by=request.user, ownership=ownership)
        body = MemoryImportResultSerializer(result).data
        return Response(body, status=status.HTTP_201_CREATED)
