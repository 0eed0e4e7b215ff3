"""Admin for teams and API tokens (projects, with their policy, are in
``sessions/policy_admin.py``: their retention preview is the sessions' rules).

Superusers see everything: they run the server. A staff user who is not a superuser sees
only the teams they administer (role admin or owner), here and in the sessions admin:
another team's rows are not in the lists and their pages are 404; and only what the
visibility rule lets them read (docs/visibility.md): a teammate's private session is listed
(``admin_reading``), its messages, entities, memories and diary entries are not.
"""

from types import SimpleNamespace

from django.contrib import admin

from teams.access import Access, Reading
from teams.models import ApiToken, Membership, Role, Team


def administered_team_ids(user) -> list[int]:
    return list(
        Membership.objects.filter(user=user, role__in=[Role.ADMIN, Role.OWNER]).values_list(
            "team_id", flat=True
        )
    )


class TeamScopedAdmin(admin.ModelAdmin):
    team_field = "team_id"
    #: how much of a row with a visibility this admin reads (sessions: that they exist)
    admin_reading = Reading.CONTENT

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        queryset = queryset.filter(
            **{f"{self.team_field}__in": administered_team_ids(request.user)}
        )
        readable = Access.for_request(SimpleNamespace(user=request.user)).readable(
            queryset.model, self.admin_reading
        )
        return queryset if readable is None else queryset.filter(readable)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Team)
class TeamAdmin(TeamScopedAdmin):
    team_field = "id"
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(ApiToken)
class ApiTokenAdmin(TeamScopedAdmin):
    list_display = [
        "prefix",
        "name",
        "team",
        "project",
        "permissions",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["revoked_at"]
    readonly_fields = ["team", "project", "prefix", "created_by", "created_at", "last_used_at"]
    exclude = ["token_hash"]
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False  # issued from the project list (shown once), never typed in

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        revoked = sum(token.revoke() for token in queryset)
        self.message_user(request, f"Revoked {revoked} token(s).")
