"""Deletion through the API: one message, sessions by filter, and the deletion records.

- ``DELETE /sessions/{id}/messages/{seq}?reason=``: the message becomes a tombstone
  (``sessions.forget.messages``);
- ``POST /sessions/delete``: every session matching a filter, to the trash, with a dry run
  (the default) that only counts (``sessions.forget.bulk``);
- ``GET /deletions``: the deletion records of the teams the caller is an admin of.

Deleting is an admin's right (``self.require(Role.ADMIN, …)``, which says what a token
needs); another team's session or record is a 404.
"""

from __future__ import annotations

from dataclasses import fields

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import exceptions, mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.response import Response

from core.openapi import error
from sessions.api.pagination import StrictLimitPagination
from sessions.filters import Filters, FiltersSerializer
from sessions.forget.bulk import MAX_BULK, plan_bulk_delete, soft_delete_many
from sessions.forget.messages import remove_message
from sessions.forget.records import admin_records, criteria_of, record_state
from sessions.models import DeletionRecord, Session
from teams.access import Reading, role_needed
from teams.models import Role
from teams.viewsets import ScopedViewSet


class DeleteByFilterSerializer(FiltersSerializer):
    """The filters of the session list, and how to delete what they match."""

    reason = serializers.CharField(
        max_length=500, help_text="why (kept in the deletion record); required"
    )
    dry_run = serializers.BooleanField(
        default=True,
        help_text="true (the default): only count what would be deleted; false: delete it",
    )
    all = serializers.BooleanField(
        default=False,
        help_text="true to delete every session you may delete (or all of one project) "
        "when no filter is given; without a filter and without it, the request is refused",
    )

    def validate(self, attrs):
        attrs = super().validate(attrs)
        narrowing = any(attrs.get(f.name) for f in fields(Filters))  # a project is not one
        if not narrowing and not attrs.get("all"):
            raise serializers.ValidationError(
                {
                    "all": "name at least one filter (topic, started_after/started_before, "
                    'agent, workflow, person, …), or send "all": true to delete every '
                    "session you may delete" + (" in this project" if attrs.get("project") else "")
                }
            )
        return attrs


DeleteByFilterResult = inline_serializer(
    "DeleteByFilterResult",
    {
        "dry_run": serializers.BooleanField(),
        "sessions": serializers.IntegerField(help_text="sessions that move (or would)"),
        "messages": serializers.IntegerField(),
        "bytes": serializers.IntegerField(),
        "already_in_trash": serializers.IntegerField(
            help_text="matching sessions already in the trash (left there)"
        ),
        "recovery_days": serializers.IntegerField(
            allow_null=True,
            help_text="how many days they can be restored (the shortest trash period of "
            "their projects)",
        ),
        "limit": serializers.IntegerField(help_text="the most one request moves"),
        "records": serializers.ListField(
            child=serializers.IntegerField(),
            help_text="ids of the deletion records left (empty on a dry run)",
        ),
    },
)


class DeletionActions:
    """Actions of the sessions viewset that delete: a message, and sessions by filter."""

    @extend_schema(
        operation_id="sessions_messages_remove",
        parameters=[
            OpenApiParameter("seq", OpenApiTypes.INT, OpenApiParameter.PATH),
            OpenApiParameter("reason", OpenApiTypes.STR, description="why (kept in the record)"),
        ],
        request=None,
        responses={204: None, 404: error(404), 409: error(409)},
        description="Remove one message for good: it stays in the transcript as a tombstone "
        "saying who removed it and when; its text, tool output, vectors, keyword index and "
        "the session's entities and summary derived from it are gone at once (the summary "
        "and entities are rebuilt from the other messages in the background). Cannot be "
        "undone; leaves a deletion record. 409 when it was already removed (with when and "
        "by whom) or the session is in the trash.",
    )
    # Routed as the DELETE of the viewset's messages/{seq} action (sessions/api/views.py).
    def remove_message(self, request, id=None, seq=None):
        session = self.get_object()
        self.require(Role.ADMIN, session.team_id)
        reason = request.query_params.get("reason", "")
        if len(reason) > 500:
            raise exceptions.ValidationError({"reason": "at most 500 characters"})
        remove_message(session, int(seq), by=request.user, reason=reason)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        operation_id="sessions_delete_by_filter",
        request=DeleteByFilterSerializer,
        responses={200: DeleteByFilterResult, 404: error(404), 409: error(409)},
        description="Move every session matching the filters to the trash (restorable for "
        "the project's trash days). The default is a dry run that answers the counts "
        'only; send "dry_run": false to delete. Covers the sessions of the teams where '
        f"you are an admin. At most {MAX_BULK} sessions move at a time: a larger match is "
        "refused (400) and is to be narrowed, e.g. by a date range. 409 when every "
        "matching session is already in the trash.",
    )
    @action(detail=False, methods=["post"], url_path="delete")
    def delete_by_filter(self, request):
        payload = DeleteByFilterSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        access = self.access
        if data.get("project"):
            project = access.find_project(data["project"])
            if project is None:
                raise exceptions.NotFound(f"No project {data['project']!r}.")
            access = access.narrowed(project=project)
        admin = access.where_can(Role.ADMIN)
        if not admin.team_ids:
            raise exceptions.PermissionDenied(role_needed(Role.ADMIN))
        filters = payload.filters()
        # An admin deletes sessions they may only list (a teammate's private one), but
        # filters on content reach only what they read (``Filters.reading_needed``).
        selected = filters.apply(admin.scope(Session.objects.all(), reading=Reading.LISTED), admin)
        plan = plan_bulk_delete(selected, check=False)
        body = {
            "dry_run": data["dry_run"],
            "sessions": plan.sessions,
            "messages": plan.messages,
            "bytes": plan.size,
            "already_in_trash": plan.already,
            "recovery_days": plan.min_days,
            "limit": MAX_BULK,
            "records": [],
        }
        if plan.sessions > MAX_BULK and not data["dry_run"]:
            return Response(
                {
                    "detail": f"{plan.sessions} sessions match; at most {MAX_BULK} move to the "
                    "trash at a time. Narrow the filters (started_after/started_before, "
                    "say) and delete in steps.",
                    **body,
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        if data["dry_run"]:
            return Response(body)
        if plan.sessions == 0 and plan.already:
            return Response(
                {
                    "detail": f"all {plan.already} matching sessions are already in the trash",
                    "state": "in_trash",
                    **body,
                },
                status=status.HTTP_409_CONFLICT,
            )
        if plan.sessions:
            result = soft_delete_many(
                plan, by=request.user, reason=data["reason"], criteria=criteria_of(filters)
            )
            body.update(
                sessions=result.done,
                messages=result.messages,
                bytes=result.size,
                already_in_trash=plan.already + result.skipped,
                records=[r.pk for r in result.records],
            )
        return Response(body)


class DeletionRecordSerializer(serializers.ModelSerializer):
    project = serializers.CharField(source="project_label")
    state = serializers.SerializerMethodField(
        help_text="in_trash, partly_restored, restored, purged, or removed (a message)"
    )

    class Meta:
        model = DeletionRecord
        fields = [
            "id",
            "created_at",
            "actor",
            "reason",
            "scope",
            "project",
            "criteria",
            "session_ids",
            "sessions",
            "messages",
            "bytes",
            "recovery_deadline",
            "restored_sessions",
            "memory_ids",
            "memories",
            "restored_memories",
            "purged_at",
            "state",
        ]
        read_only_fields = fields

    def get_state(self, record) -> str:
        return record_state(record)


class DeletionCursorPagination(StrictLimitPagination):
    ordering = ("-created_at", "-id")
    page_size = 50
    max_page_size = 500


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter("project", OpenApiTypes.STR, description="'team/project' or id")
        ],
        responses={200: DeletionRecordSerializer(many=True), 403: error(403)},
        description="Deletion records, newest first: who deleted what (sessions, a message, a "
        "filter's matches, memories: scope memory, with memory_ids and the types counted "
        "in criteria), when, why, how much, until when it can be restored, and whether "
        "it was restored or purged. They hold no content and outlive the purge. Admins see "
        "their teams' records.",
    )
)
class DeletionRecordViewSet(mixins.ListModelMixin, ScopedViewSet):
    """GET /api/v1/deletions."""

    base_queryset = DeletionRecord.objects.all()
    serializer_class = DeletionRecordSerializer
    pagination_class = DeletionCursorPagination

    def get_queryset(self):
        # admin_records scopes them (to the teams the caller is an admin of), not the base.
        records = admin_records(self.access, self.base_queryset.all())
        if records is None:
            raise exceptions.PermissionDenied(role_needed(Role.ADMIN))
        reference = self.request.query_params.get("project")
        if reference:
            project = self.access.find_project(reference)
            if project is None:
                raise exceptions.NotFound(
                    f"No project {reference!r} (use 'team/project' or an id)."
                )
            records = records.filter(project=project)
        return records
