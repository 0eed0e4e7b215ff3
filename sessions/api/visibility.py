"""POST /api/v1/sessions/visibility — give several sessions one visibility, all or nothing
(docs/visibility.md). The rules are ``sessions.visibility.change``'s, the one path every
change takes (the session page, its list, PATCH, the CLI): the owner gives any visibility
the project allows, an admin of the team only a less visible one, nobody else any.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from core.openapi import error
from core.plain_input import PlainInputMixin
from sessions import visibility
from sessions.api.errors import SessionNotFound
from sessions.models import Session
from teams.access import Reading
from teams.models import Role, Visibility
from teams.viewsets import ScopedAPIView

# One request changes at most this many sessions (a page of the list is 50; a script
# changing a whole project sends several).
MAX_IDS = 500


class VisibilityRequestSerializer(PlainInputMixin, serializers.Serializer):
    ids = serializers.ListField(
        child=serializers.CharField(max_length=200),
        allow_empty=False,
        max_length=MAX_IDS,
        help_text=f"the sessions' ids (at most {MAX_IDS}); each must be one you can list",
    )
    visibility = serializers.ChoiceField(
        choices=Visibility.choices,
        help_text="'private' (only the owner reads it), 'summary' (the team reads its title, "
        "summary, topics and accepted memories) or 'team'",
    )


class VisibilityResultSerializer(serializers.Serializer):
    visibility = serializers.ChoiceField(choices=Visibility.choices)
    changed = serializers.ListField(
        child=serializers.CharField(), help_text="the ids whose visibility changed"
    )
    unchanged = serializers.ListField(
        child=serializers.CharField(), help_text="the ids that already had it"
    )


class SessionVisibilityView(ScopedAPIView):
    """Change who reads several sessions at once."""

    @extend_schema(
        operation_id="sessions_visibility",
        request=VisibilityRequestSerializer,
        responses={
            200: VisibilityResultSerializer,
            400: error(400),
            403: error(403),
            404: error(404),
        },
        description="Give every session in `ids` the same `visibility`, all or nothing: the "
        "owner of a session may give it any visibility its project allows; an admin of its "
        "team may only make it less visible (team → summary → private); anyone else is "
        "refused. An id you cannot list is a 404; an unknown visibility, one a project does "
        "not allow, or 'private' for a session that belongs to the team (captured by a team "
        "token) is a 400 naming `visibility`; a change that is not yours to make is a 403 "
        "naming `visibility`. Nothing changes unless every session may.",
        examples=[
            OpenApiExample(
                "Make two sessions private",
                value={
                    "ids": ["2025-01-15-architect-1a2b3c", "2025-01-16-dev-4d5e6f"],
                    "visibility": "private",
                },
                request_only=True,
            )
        ],
    )
    def post(self, request):
        payload = VisibilityRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        ids = list(dict.fromkeys(payload.validated_data["ids"]))  # once each, in order
        sessions = self.listed_sessions(ids)
        if self.access.is_agent:  # a token changes what it may write
            for team_id in {s.team_id for s in sessions}:
                self.require(Role.MEMBER, team_id)
        changed = visibility.change(self.access, sessions, payload.validated_data["visibility"])
        changed_ids = {s.public_id for s in changed}
        return Response(
            {
                "visibility": payload.validated_data["visibility"],
                "changed": [i for i in ids if i in changed_ids],
                "unchanged": [i for i in ids if i not in changed_ids],
            }
        )

    def listed_sessions(self, ids: list[str]) -> list[Session]:
        """The sessions of ``ids`` the caller may list (any deletion state), in the order
        asked; a 404 naming those it may not (or that do not exist: the same to it)."""
        rows = self.access.scope(
            Session.objects.select_related("project", "project__team"), reading=Reading.LISTED
        ).filter(public_id__in=ids)
        found = {s.public_id: s for s in rows}
        missing = [i for i in ids if i not in found]
        if missing:
            raise SessionNotFound(
                f"No such session in your projects: {', '.join(missing[:20])}"
                + (f" and {len(missing) - 20} more" if len(missing) > 20 else "")
                + ". Nothing was changed."
            )
        return [found[i] for i in ids]
