"""The memory trash through the API (docs/api.md, "Deleting memories"): what was deleted,
and deleting many.

- ``GET /memories/trash``: the deleted memories of the caller's projects, newest deletion
  first, with who deleted them, why, and until when they can be restored;
- ``POST /memories/delete``: every memory matching filters (project, topic, type, agent,
  person, since/until on ``occurred_at``) to the trash, with a dry run (the default) that
  counts and shows a sample, and a cap per request (``memories.forget.trash.MAX_BULK``).

Restoring one is ``POST /memories/{id}/restore`` (``memories/api/views.py``). The work is
``memories/forget/trash.py``'s; this module reads requests and answers.
"""

from __future__ import annotations

from django.db.models import Min
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import action
from rest_framework.response import Response

from core.openapi import error
from memories.api.serializers import StrictSerializer
from memories.forget import trash as memory_trash  # (the ``trash`` action shadows "trash")
from memories.forget.records import deleted_by_labels
from memories.models import Memory, MemoryType
from memories.retrieve.query import visible
from sessions.api.pagination import StrictLimitPagination
from sessions.api.serializers import StorableDateTimeField
from teams.access import role_needed
from teams.models import Role

# The filters that narrow a bulk delete (a project alone does not: it is where, not which).
NARROWING = ("topic", "type", "agent", "person", "since", "until")


class TrashedMemorySerializer(serializers.ModelSerializer):
    """A memory in the trash: what it was, and when, by whom and why it was deleted."""

    id = serializers.CharField(source="public_id")
    project = serializers.SerializerMethodField()
    deleted_by = serializers.SerializerMethodField(
        help_text="the person, the token ('token mem_ab12…') or 'an agent'"
    )
    reason = serializers.CharField(source="delete_reason")
    recovery_deadline = serializers.SerializerMethodField(
        help_text="until when it can be restored; the daily purge deletes it for good after"
    )

    class Meta:
        model = Memory
        fields = [
            "id",
            "project",
            "type",
            "topic",
            "content",
            "agent",
            "person",
            "occurred_at",
            "deleted_at",
            "deleted_by",
            "reason",
            "recovery_deadline",
        ]
        read_only_fields = fields

    def get_project(self, memory) -> str:
        return f"{memory.project.team.slug}/{memory.project.slug}"

    def get_deleted_by(self, memory) -> str:
        return self.context.get("deleted_by", {}).get(memory.pk, "an agent")

    @extend_schema_field(OpenApiTypes.DATETIME)
    def get_recovery_deadline(self, memory):
        return serializers.DateTimeField().to_representation(memory_trash.recovery_deadline(memory))


class SampleSerializer(serializers.ModelSerializer):
    """One memory a bulk delete matches (its content cut to 200 characters)."""

    id = serializers.CharField(source="public_id")
    project = serializers.SerializerMethodField()
    content = serializers.SerializerMethodField()

    class Meta:
        model = Memory
        fields = ["id", "project", "type", "topic", "agent", "person", "occurred_at", "content"]
        read_only_fields = fields

    def get_project(self, memory) -> str:
        return f"{memory.project.team.slug}/{memory.project.slug}"

    def get_content(self, memory) -> str:
        return memory.content[:200]


class BulkDeleteSerializer(StrictSerializer):
    """Which memories, and how to delete them."""

    project = serializers.CharField(required=False, help_text="'team/project' or id")
    topic = serializers.CharField(max_length=100, required=False, help_text="the topic key")
    type = serializers.ListField(
        child=serializers.ChoiceField(choices=MemoryType.choices),
        required=False,
        allow_empty=False,
        max_length=len(MemoryType.choices),
        help_text="one or more types",
    )
    agent = serializers.CharField(max_length=64, required=False)
    person = serializers.CharField(max_length=200, required=False, help_text="its user_name")
    since = StorableDateTimeField(
        required=False, help_text="said (occurred_at) at or after this time"
    )
    until = StorableDateTimeField(required=False, help_text="said (occurred_at) before this time")
    reason = serializers.CharField(
        max_length=500,
        required=False,
        help_text="why (kept with them and in the deletion record); required unless dry_run",
    )
    dry_run = serializers.BooleanField(
        default=True,
        help_text="true (the default): only count what would be deleted and show a sample; "
        "false: delete it",
    )
    all = serializers.BooleanField(
        default=False,
        help_text="true to delete every memory you may delete (or all of one project) when "
        "no filter narrows it; without a filter and without it, the request is refused",
    )

    def validate(self, attrs):
        attrs = super().validate(attrs)
        since, until = attrs.get("since"), attrs.get("until")
        if since and until and until <= since:
            raise serializers.ValidationError(
                {
                    "until": [
                        f"must be later than since ({since.isoformat()}): from since up to "
                        "until is an empty range"
                    ]
                }
            )
        if not any(attrs.get(name) for name in NARROWING) and not attrs.get("all"):
            raise serializers.ValidationError(
                {
                    "all": [
                        "name at least one filter (topic, type, agent, person, since/until), "
                        'or send "all": true to delete every memory you may delete'
                        + (" in this project" if attrs.get("project") else "")
                    ]
                }
            )
        if not attrs["dry_run"] and not (attrs.get("reason") or "").strip():
            raise serializers.ValidationError({"reason": ["say why they are deleted"]})
        return attrs

    def criteria(self) -> dict:
        """The filters as the deletion record keeps them (values only, no content)."""
        data = self.validated_data
        criteria = {name: data[name] for name in ("project", *NARROWING) if data.get(name)}
        for name in ("since", "until"):
            if name in criteria:
                criteria[name] = criteria[name].isoformat()
        if data.get("all"):
            criteria["all"] = True
        return criteria


BulkDeleteResult = inline_serializer(
    "MemoryBulkDeleteResult",
    {
        "dry_run": serializers.BooleanField(),
        "memories": serializers.IntegerField(help_text="memories that move (or would)"),
        "already_in_trash": serializers.IntegerField(
            help_text="matching memories already in the trash (left there)"
        ),
        "sample": SampleSerializer(many=True, help_text="the newest few of them"),
        "recovery_days": serializers.IntegerField(
            allow_null=True,
            help_text="how many days they can be restored (the shortest trash period of "
            "their projects)",
        ),
        "limit": serializers.IntegerField(help_text="the most one request deletes"),
        "records": serializers.ListField(
            child=serializers.IntegerField(),
            help_text="ids of the deletion records left (empty on a dry run)",
        ),
    },
)


class TrashCursorPagination(StrictLimitPagination):
    ordering = ("-deleted_at", "-id")
    page_size = 50
    max_page_size = 500


class TrashActions:
    """Actions of the memories viewset about the trash: list it, delete by filter."""

    def project_named(self, reference: str | None):
        """The project the request (or the working-directory header) names, if any, and
        the caller's access narrowed to it."""
        project = self.named_project(reference, role=Role.VIEWER)
        if project is None:
            return None, self.access
        self.require(Role.VIEWER, project.team_id)
        return project, self.access.narrowed(project=project)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "project", OpenApiTypes.STR, description="'team/project' or id: only its"
            ),
        ],
        responses={200: TrashedMemorySerializer(many=True), 404: error(404)},
        description="The deleted memories of your projects, newest deletion first, paginated "
        "by cursor: when, by whom and why each was deleted, and its recovery_deadline (the "
        "deletion plus the project's trash days). Restore one with POST "
        "/api/v1/memories/{id}/restore before then; the daily purge deletes it for good "
        "after.",
        filters=False,
    )
    @action(detail=False, methods=["get"], pagination_class=TrashCursorPagination)
    def trash(self, request):
        project, access = self.project_named(request.query_params.get("project"))
        memories = visible(access, include_deleted=True)
        if project is not None:
            memories = memories.filter(project=project)
        memories = memory_trash.in_trash(memories).select_related("project__team", "deleted_by")
        page = self.paginator.paginate_queryset(memories, request, view=self)
        context = {"deleted_by": deleted_by_labels(page)}
        body = TrashedMemorySerializer(page, many=True, context=context).data
        return self.paginator.get_paginated_response(body)

    @extend_schema(
        operation_id="memories_delete_by_filter",
        request=BulkDeleteSerializer,
        responses={200: BulkDeleteResult, 403: error(403), 404: error(404)},
        description="Move every memory matching the filters to the trash (restorable for "
        "the project's trash days), leaving one deletion record per project. The default is "
        "a dry run that answers how many and a sample, and changes nothing; send "
        '"dry_run": false (with a reason) to delete. since/until are on occurred_at (when '
        "it was said): since inclusive, until exclusive; an empty or inverted range is a "
        '400 naming until. No narrowing filter needs "all": true (else a 400 naming all). '
        f"At most {memory_trash.MAX_BULK} memories are deleted per request: a larger match is "
        "refused (400, with the counts) and is to be narrowed, e.g. by a date range. Covers "
        "the memories of the teams where you are an admin (a token: with the delete "
        "permission).",
    )
    @action(detail=False, methods=["post"], url_path="delete")
    def delete_by_filter(self, request):
        payload = BulkDeleteSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        project, access = self.project_named(data.get("project"))
        admin = access.where_can(Role.ADMIN)
        if not admin.team_ids:
            raise exceptions.PermissionDenied(role_needed(Role.ADMIN))
        selected = visible(admin, include_deleted=True)
        if project is not None:  # its own memories, not the team's shared from elsewhere
            selected = selected.filter(project=project)
        selected = _narrowed(selected, data)
        plan = memory_trash.plan_bulk_delete(selected.select_related("project__team"))
        days = selected.exclude(status="deleted").aggregate(days=Min("project__trash_days"))
        body = {
            "dry_run": data["dry_run"],
            "memories": plan.count,
            "already_in_trash": plan.already,
            "sample": SampleSerializer(plan.sample, many=True).data,
            "recovery_days": days["days"],
            "limit": memory_trash.MAX_BULK,
            "records": [],
        }
        if data["dry_run"]:
            return Response(body)
        if plan.count > memory_trash.MAX_BULK:
            return Response(
                {
                    "detail": f"{plan.count} memories match; at most {memory_trash.MAX_BULK} are "
                    "deleted at a time. Narrow the filters (since/until, say) and delete in "
                    "steps.",
                    **body,
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        done = memory_trash.delete_many(
            selected, by=request.user, reason=data["reason"], criteria=payload.criteria()
        )
        body.update(memories=done.count, records=[record.pk for record in done.records])
        return Response(body)


def _narrowed(memories, data: dict):
    """``memories`` narrowed by a bulk delete's filters."""
    if data.get("topic"):
        memories = memories.filter(topic=data["topic"])
    if data.get("type"):
        memories = memories.filter(type__in=data["type"])
    if data.get("agent"):
        memories = memories.filter(agent=data["agent"])
    if data.get("person"):
        memories = memories.filter(person=data["person"])
    if data.get("since"):
        memories = memories.filter(occurred_at__gte=data["since"])
    if data.get("until"):
        memories = memories.filter(occurred_at__lt=data["until"])
    return memories
