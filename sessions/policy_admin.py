"""The admin of projects and their policy (quotas, retention, trash, privacy). It lives with
sessions because a change of retention or trash days is previewed by the sessions' own rules
(``sessions/forget/retention.py``) before it is saved; ``sessions/admin.py`` loads it.

Superusers see every project; a staff user who is not a superuser only their teams'
(``teams.admin.TeamScopedAdmin``).
"""

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.utils.html import format_html

from sessions.forget.retention import (
    CONFIRM_ABOVE_PERCENT,
    RetentionPlan,
    next_run,
    retention_plan,
)
from teams.admin import TeamScopedAdmin
from teams.models import ApiToken, Project, Visibility

PREVIEW_TEMPLATE = "admin/teams/project/retention_preview.html"


class ProjectAdminForm(forms.ModelForm):
    """A project's policy. A change of its retention or trash days is counted before it is
    saved: one that would remove more than a tenth of the project needs ``confirm_removal``."""

    confirm_removal = forms.BooleanField(
        required=False,
        label="Confirm removal",
        help_text="Tick to save a retention or trash change that removes more than "
        f"{CONFIRM_ABOVE_PERCENT} % of the project's sessions.",
    )

    # Checkboxes rather than the array's comma-separated text; Project.clean checks that the
    # default is among them.
    allowed_visibilities = forms.TypedMultipleChoiceField(
        choices=Visibility.choices,
        widget=forms.CheckboxSelectMultiple,
        label="Allowed visibilities",
        help_text=Project._meta.get_field("allowed_visibilities").help_text,
        error_messages={"required": "Allow at least one visibility."},
    )

    class Meta:
        model = Project
        fields = ["retention_days", "trash_days"]  # the admin adds its fieldsets' fields

    def clean_allowed_visibilities(self):
        chosen = self.cleaned_data["allowed_visibilities"]
        return [v for v in Visibility.values if v in chosen]  # least visible first

    def clean(self):
        cleaned = super().clean()
        policy = {"retention_days", "trash_days"}
        if self.instance.pk is None or not policy & set(self.changed_data) or self.errors:
            return cleaned
        plan = retention_plan(
            self.instance,
            cleaned.get("retention_days"),
            now=next_run(),
            trash_days=cleaned.get("trash_days"),
        )
        if plan.needs_confirmation and not cleaned.get("confirm_removal"):
            self.add_error(
                "confirm_removal",
                f"{plan.summary()} That is more than {CONFIRM_ABOVE_PERCENT} % of the project: "
                "tick “Confirm removal” to save it, or choose a longer period.",
            )
        return cleaned


@admin.register(Project)
class ProjectAdmin(TeamScopedAdmin):
    form = ProjectAdminForm
    list_display = [
        "name",
        "team",
        "slug",
        "session_quota_bytes",
        "retention_days",
        "trash_days",
        "redact_secrets",
        "default_visibility",
    ]
    list_filter = ["team", "redact_secrets", "default_visibility"]
    search_fields = ["name", "slug", "directory", "team__name"]
    readonly_fields = ["retention_preview"]
    fieldsets = [
        (None, {"fields": ["team", "name", "slug", "description", "directory"]}),
        (
            "Retention and trash",
            {
                "description": "Sessions past the retention move to the trash in the daily "
                "run, and are purged for good after the trash period. The preview counts what "
                "the next run removes with the values in this form.",
                "fields": ["retention_days", "trash_days", "retention_preview", "confirm_removal"],
            },
        ),
        (
            "Lifecycle",
            {
                "description": "How sessions nobody uses age: idle, then decaying, then "
                "archived. Any read or new message makes a session active again.",
                "fields": ["idle_after_hours", "decaying_after_days", "archive_after_days"],
            },
        ),
        (
            "Session size",
            {
                "fields": [
                    "session_quota_bytes",
                    "quota_warn_percent",
                    "quota_compact_percent",
                    "quota_action",
                ]
            },
        ),
        ("Privacy", {"fields": ["redact_secrets", "redact_emails", "redact_phones"]}),
        (
            "Who reads sessions",
            {
                "description": "Who reads a new session unless its capture or its token says "
                "otherwise, and which visibilities sessions of this project may have "
                "(docs/visibility.md). Changing the default changes no existing session.",
                "fields": ["default_visibility", "allowed_visibilities"],
            },
        ),
        ("Memory review", {"fields": ["memory_review_threshold"]}),
    ]
    actions = ["issue_token", "preview_retention"]

    class Media:
        js = ["web/admin-retention.js"]

    def get_urls(self):
        preview = path(
            "<path:object_id>/retention-preview/",
            self.admin_site.admin_view(self.retention_preview_view),
            name="teams_project_retention_preview",
        )
        return [preview, *super().get_urls()]

    @admin.display(description="Next run removes")
    def retention_preview(self, project):
        if project is None or project.pk is None:
            return "Counted once the project is saved."
        # The change form's script fills the box again from the url as the values change.
        return format_html(
            '<div id="retention-preview" data-url="{}" aria-live="polite">{}</div>',
            reverse("admin:teams_project_retention_preview", args=[project.pk]),
            render_to_string(
                PREVIEW_TEMPLATE,
                {"plan": _plan(project, project.retention_days, project.trash_days)},
            ),
        )

    def retention_preview_view(self, request, object_id):
        """The preview for the values being typed (``retention_days``, ``trash_days``), as
        the change form's script asks for it."""
        project = self.get_object(request, object_id)
        if project is None or not self.has_change_permission(request, project):
            raise Http404("No such project.")
        try:
            days = _days(request.GET.get("retention_days"))
            trash_days = _days(request.GET.get("trash_days")) or project.trash_days
        except ValueError as exc:
            return HttpResponse(str(exc), content_type="text/plain", status=400)
        return render(
            request,
            PREVIEW_TEMPLATE,
            {"plan": _plan(project, days, trash_days)},
        )

    @admin.action(description="Preview retention (what the next run removes)")
    def preview_retention(self, request, queryset):
        for project in queryset.select_related("team"):
            plan = _plan(project, project.retention_days, project.trash_days)
            level = messages.WARNING if plan.needs_confirmation else messages.INFO
            self.message_user(request, f"{project}: {plan.summary()}", level)

    @admin.action(description="Issue an API token (shown once)")
    def issue_token(self, request, queryset):
        for project in queryset:
            _, raw = ApiToken.issue(project, name="admin", created_by=request.user)
            self.message_user(
                request,
                f"Token for {project}: {raw} — copy it now, it is not shown again.",
                messages.WARNING,
            )


def _plan(project: Project, days: int | None, trash_days: int) -> RetentionPlan:
    return retention_plan(project, days, now=next_run(), trash_days=trash_days)


def _days(raw: str | None) -> int | None:
    """A number of days as typed in the form: a whole number of at least 1, or empty (None)."""
    raw = (raw or "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"days must be a whole number of at least 1, not {raw!r}")
    return int(raw)
