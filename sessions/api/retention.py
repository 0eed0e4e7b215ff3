"""GET /api/v1/retention — the dry run of a retention policy, for scripts: what the next daily
run would move to the trash and purge with a given retention and trash period, before anyone
changes the project's policy (in the admin)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.response import Response

from core.openapi import error
from core.plain_input import PlainInputMixin
from sessions.forget.retention import CONFIRM_ABOVE_PERCENT, next_run, retention_plan
from teams.models import Role
from teams.viewsets import ScopedAPIView


class RetentionQuerySerializer(PlainInputMixin, serializers.Serializer):
    project = serializers.CharField(
        required=False,
        help_text="'team/project' or id; a token's own project when omitted",
    )
    days = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="the retention to try, in days; the project's own when omitted",
    )
    trash_days = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="the trash period to try, in days; the project's own when omitted",
    )


class RetentionPlanSerializer(serializers.Serializer):
    project = serializers.CharField(help_text="'team/project'")
    days = serializers.IntegerField(
        allow_null=True, help_text="the retention counted (null: none, nothing moves)"
    )
    trash_days = serializers.IntegerField()
    at = serializers.DateTimeField(help_text="when the next run is")
    live_sessions = serializers.IntegerField(help_text="the project's sessions not in the trash")
    sessions = serializers.IntegerField(help_text="live sessions the run moves to the trash")
    messages = serializers.IntegerField(help_text="their messages")
    bytes = serializers.IntegerField(help_text="their size")
    percent = serializers.FloatField(help_text="share of the live sessions moved, in percent")
    purge_sessions = serializers.IntegerField(
        help_text="sessions in the trash past the trash period, purged for good"
    )
    purge_messages = serializers.IntegerField()
    purge_bytes = serializers.IntegerField()
    purge_percent = serializers.FloatField(
        help_text="share of all the project's sessions purged, in percent"
    )
    needs_confirmation = serializers.BooleanField(
        help_text=f"it removes more than {CONFIRM_ABOVE_PERCENT} % of the project: the admin "
        "asks for confirmation before saving such a policy"
    )
    summary = serializers.CharField(help_text="the same, in one sentence")


class RetentionView(ScopedAPIView):
    """What the next retention run would remove from a project. People need to be admins of
    its team; tokens need the delete permission."""

    @extend_schema(
        description="A dry run: counts what the next daily retention run would move to the "
        "trash (sessions whose last activity is more than `days` ago) and purge for good "
        "(trashed sessions past `trash_days`), changing nothing.",
        parameters=[RetentionQuerySerializer],
        responses={
            200: RetentionPlanSerializer,
            400: error(400),
            403: error(403),
            404: error(404),
        },
    )
    def get(self, request):
        query = RetentionQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        wanted = query.validated_data
        project = self._project(wanted.get("project"))
        plan = retention_plan(
            project,
            wanted.get("days", project.retention_days),
            now=next_run(),
            trash_days=wanted.get("trash_days", project.trash_days),
        )
        body = {**plan.as_json(), "project": str(project), "summary": plan.summary()}
        return Response(RetentionPlanSerializer(body).data)

    def _project(self, reference: str | None):
        access = self.access
        if access.is_agent and not access.token.is_team_level:
            project = access.token.project
            if reference and access.find_project(reference) is None:
                raise exceptions.NotFound(f"No project {reference!r} for this token.")
            self.require(Role.ADMIN, project.team_id)  # a token: the delete permission
            return project
        if not reference:
            raise exceptions.ValidationError({"project": "name the project ('team/project')"})
        project = access.find_project(reference)
        if project is None:
            raise exceptions.NotFound(f"No project {reference!r} (use 'team/project' or an id).")
        self.require(Role.ADMIN, project.team_id)
        return project
