"""``GET /api/v1/aliases``: who is who, as the caller's projects learned it (read-only).

The names people and agents are called by (sessions/enrich/aliases.py) and whom they stand
for; search uses those marked ``used`` (search/aliases.py). Scoped like every list: another
team's aliases are simply not there.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import exceptions, mixins, serializers

from core.openapi import error
from sessions.api.pagination import StrictLimitPagination
from sessions.enrich.aliases import USABLE
from sessions.models import SpeakerAlias
from teams.viewsets import ScopedViewSet


class SpeakerAliasSerializer(serializers.ModelSerializer):
    project = serializers.SerializerMethodField(help_text="'team/project'")
    used = serializers.SerializerMethodField(
        help_text="search uses it: seen often or strongly enough"
    )

    class Meta:
        model = SpeakerAlias
        fields = [
            "id",
            "project",
            "alias",
            "speaker",
            "is_agent",
            "source",
            "evidence",
            "used",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def get_project(self, alias) -> str:
        return f"{alias.project.team.slug}/{alias.project.slug}"

    def get_used(self, alias) -> bool:
        return alias.evidence >= USABLE


class AliasCursorPagination(StrictLimitPagination):
    ordering = ("-created_at", "-id")
    page_size = 100
    max_page_size = 1000


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter("project", OpenApiTypes.STR, description="'team/project' or id")
        ],
        responses={200: SpeakerAliasSerializer(many=True), 403: error(403), 404: error(404)},
        description="Who is who: the names a project's people and agents are called by "
        '("Kate" for the author \'katherine.s\', the persona "Winston" for the agent '
        "'architect'), learned from its sessions: how (vocative: addressed by it; self: "
        "introduced themself; persona; name_part: the first word of a display name), how "
        "often it was seen (a strong sighting counts two), and whether search uses it. "
        "Newest first, cursor-paginated.",
    )
)
class SpeakerAliasViewSet(mixins.ListModelMixin, ScopedViewSet):
    """GET /api/v1/aliases."""

    base_queryset = SpeakerAlias.objects.select_related("project", "project__team")
    serializer_class = SpeakerAliasSerializer
    pagination_class = AliasCursorPagination

    def get_queryset(self):
        aliases = super().get_queryset()
        reference = self.request.query_params.get("project")
        if reference:
            project = self.access.find_project(reference)
            if project is None:
                raise exceptions.NotFound(
                    f"No project {reference!r} (use 'team/project' or an id)."
                )
            aliases = aliases.filter(project=project)
        return aliases
