"""Anonymisation over the API: a session (``POST /sessions/{id}/anonymize``, in
``views.py``), a project (``POST /anonymize?project=``), and the project job's progress
(``GET /anonymize/{job}``). Admins only; a preview (``dry_run``, the default) writes nothing."""

from __future__ import annotations

from celery.result import AsyncResult
from django.db import transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response

from core.openapi import error
from core.plain_input import PlainInputMixin
from sessions.api.parsers import JSONParser
from sessions.forget import anonymize
from sessions.tasks import anonymize_project, poke_enrichment
from teams.models import Role
from teams.viewsets import ScopedAPIView

_OPTIONS = {
    "remove_user_names": "people's names (team members, the session's person, authors, "
    "names in metadata) become User-1, User-2 …",
    "remove_project_names": "the team's and its projects' names and slugs become "
    "Project-A, Project-B …",
    "remove_file_paths": "absolute file paths become /path/…/<file name>",
    "remove_emails": "e-mail addresses become [EMAIL-1] …",
    "remove_phones": "phone numbers become [PHONE-1] …",
    "remove_ips": "IP addresses become [IP-1] …",
    "replace_with_placeholders": "numbered placeholders, the same across the project; "
    "false: every replacement is [REMOVED]",
    "preserve_structure": "keep timestamps, tool-call links and (anonymised) metadata; "
    "false: they are cleared too",
}


class JsonBooleanField(serializers.BooleanField):
    """true or false, as JSON says them: "yes" or 1 for an option that rewrites text
    for good is more likely a mistake than a choice."""

    default_error_messages = {"invalid": "Must be true or false (JSON), not {input!r}."}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class AnonymizeRequestSerializer(PlainInputMixin, serializers.Serializer):
    dry_run = JsonBooleanField(
        default=True, help_text="only say what would change (the default); false applies it"
    )

    def config(self) -> anonymize.AnonymizationConfig:
        return anonymize.config_from(self.validated_data)


for _name, _help in _OPTIONS.items():
    AnonymizeRequestSerializer._declared_fields[_name] = JsonBooleanField(
        default=True, help_text=_help
    )


class AnonymizeOutcomeSerializer(serializers.Serializer):
    dry_run = serializers.BooleanField()
    sessions = serializers.IntegerField(help_text="sessions looked at")
    sessions_in_scope = serializers.IntegerField(
        help_text="sessions of the scope; a project's preview looks at its latest 200"
    )
    sessions_changed = serializers.IntegerField()
    messages_changed = serializers.IntegerField()
    entities_changed = serializers.IntegerField()
    derived_changed = serializers.DictField(
        child=serializers.IntegerField(),
        help_text=(
            "what is derived from the sessions and rewritten with them, by kind: memories "
            "(content, person, agent, topic, details, tags and vector), evidence_quotes, "
            "history_reasons (the reasons and actors of their status changes), "
            "diary_entries (removed and distilled again from the anonymised sessions) and "
            "aliases (speaker names)"
        ),
    )
    replacements = serializers.DictField(
        child=serializers.IntegerField(), help_text="by kind: user, project, path, email, …"
    )
    mapping = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="each placeholder and what it replaces (previews and single sessions)",
    )
    excerpts = serializers.ListField(
        child=inline_serializer(
            "AnonymizeExcerpt",
            {
                "where": serializers.CharField(),
                "before": serializers.CharField(),
                "after": serializers.CharField(),
            },
        ),
        required=False,
    )


class AnonymizeJobSerializer(serializers.Serializer):
    job = serializers.CharField()
    state = serializers.ChoiceField(choices=["queued", "running", "done", "failed"])
    done = serializers.IntegerField(help_text="sessions anonymised so far")
    total = serializers.IntegerField()
    result = AnonymizeOutcomeSerializer(allow_null=True)
    error = serializers.CharField(required=False, help_text="why a failed job stopped")


def read_request(data) -> AnonymizeRequestSerializer:
    payload = AnonymizeRequestSerializer(data=data)
    payload.is_valid(raise_exception=True)
    return payload


def poke_after(outcome: anonymize.Outcome) -> anonymize.Outcome:
    if outcome.left_to_embed:
        transaction.on_commit(poke_enrichment)
    return outcome


class ProjectAnonymizeView(ScopedAPIView):
    """POST /api/v1/anonymize?project=team/project"""

    parser_classes = [JSONParser]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "project",
                OpenApiTypes.STR,
                description="'team/project' or id; may be left out by someone in one project",
            )
        ],
        request=AnonymizeRequestSerializer,
        responses={200: AnonymizeOutcomeSerializer, 202: AnonymizeJobSerializer, 403: error(403)},
    )
    def post(self, request):
        """Anonymise every session of a project. With dry_run (the default), a preview of
        its latest 200 sessions: what would change, and the placeholders. With dry_run false,
        a background job (202) whose progress GET /api/v1/anonymize/{job} reports. Admins of
        the project's team only."""
        project = self.resolve_project(request.query_params.get("project"), role=Role.ADMIN)
        payload = read_request(request.data)
        if payload.validated_data["dry_run"]:
            outcome = anonymize.anonymize_project(project, payload.config(), dry_run=True)
            return Response(AnonymizeOutcomeSerializer(outcome.as_dict()).data)
        options = {k: v for k, v in payload.validated_data.items() if k != "dry_run"}
        user_id = request.user.pk if getattr(request.user, "pk", None) else None
        job = anonymize_project.apply_async(args=[project.pk, options, user_id])
        total = project.sessions.count()
        meta = {"team": project.team_id, "project": project.pk, "done": 0, "total": total}
        # Known before a worker starts it, so the job is found (and scoped) at once.
        job.backend.store_result(job.id, meta, "QUEUED")
        body = {"job": job.id, "state": "queued", "done": 0, "total": total, "result": None}
        return Response(AnonymizeJobSerializer(body).data, status=status.HTTP_202_ACCEPTED)


_STATES = {"QUEUED": "queued", "PENDING": "queued", "STARTED": "running", "PROGRESS": "running"}
_STATES |= {"SUCCESS": "done", "FAILED": "failed", "FAILURE": "failed", "REVOKED": "failed"}


class AnonymizeJobView(ScopedAPIView):
    """GET /api/v1/anonymize/{job}"""

    @extend_schema(responses={200: AnonymizeJobSerializer, 404: error(404)})
    def get(self, request, job):
        result = AsyncResult(job, app=anonymize_project.app)
        info = result.info if isinstance(result.info, dict) else None
        if info is None or not self.access.can(Role.ADMIN, info.get("team")):
            raise exceptions.NotFound("No such anonymisation job.")
        body = {
            "job": job,
            "state": _STATES.get(result.state, "running"),
            "done": info.get("done", 0),
            "total": info.get("total", 0),
            "result": info.get("result"),
        }
        if "error" in info:
            body["error"] = info["error"]
        return Response(AnonymizeJobSerializer(body).data)
