"""Forms of the UI. The filters' inputs come from the one filter vocabulary
(sessions/filters.py), and its parser checks them, as it does the API's parameters."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from functools import cache

from django import forms
from django.utils import timezone
from rest_framework import serializers

from search.service import MAX_LIMIT, MODES
from sessions.filters import FiltersSerializer
from teams.models import TokenPermission, Visibility, default_token_permissions
from web.pagination import DEFAULT_SORT, SORTS

MAX_QUERY_CHARS = 2000  # as the search API
SEARCH_PAGE_SIZE = 20
MAX_SEARCH_PAGE = MAX_LIMIT // SEARCH_PAGE_SIZE

# Every filter of the vocabulary, in the order the pages show them.
FILTER_INPUTS = (
    "agent", "workflow", "person", "status", "lifecycle", "min_priority", "source_format",
    "started_after", "started_before", "ended_after", "ended_before", "topic", "entity_type",
    "entity", "role",
)  # fmt: skip
LABELS = {
    "source_format": "Source",
    "started_after": "Started from",
    "started_before": "Started by",
    "ended_after": "Ended from",
    "ended_before": "Ended by",
    "entity_type": "Entity type",
    "role": "Speaker",
    "min_priority": "Priority at least",
    "agent": "Agent (character)",
}
PLACEHOLDERS = {"entity": "src/auth.py"}


def _any(choices, label="Any"):
    return [("", label), *choices]


def _start_of(day):
    return timezone.make_aware(datetime.combine(day, time.min), timezone.get_current_timezone())


@cache
def vocabulary() -> dict[str, serializers.Field]:
    return dict(FiltersSerializer().fields)


class ShownChoiceField(forms.ChoiceField):
    """Shows the choices; the filter parser says whether a value is one of them."""

    def valid_value(self, value) -> bool:
        return True


def filter_input(name: str) -> forms.Field:
    """The page's input for the filter ``name``. Times are picked as days."""
    field = vocabulary()[name]
    label = LABELS.get(name)
    if isinstance(field, serializers.ChoiceField):
        return ShownChoiceField(required=False, label=label, choices=_any(field.choices.items()))
    if isinstance(field, serializers.DateTimeField):
        return forms.DateField(
            required=False, label=label, widget=forms.DateInput(attrs={"type": "date"})
        )
    if isinstance(field, serializers.FloatField):  # the decay priority, 0..1
        widget = forms.NumberInput(
            attrs={"min": field.min_value, "max": field.max_value, "step": "0.05"}
        )
        return forms.CharField(required=False, label=label, widget=widget)
    attrs = {"maxlength": field.max_length}
    if name in PLACEHOLDERS:
        attrs["placeholder"] = PLACEHOLDERS[name]
    return forms.CharField(required=False, label=label, widget=forms.TextInput(attrs=attrs))


class FiltersForm(forms.Form):
    """The filters the session list and the search page share: the current team's project,
    and every filter of the vocabulary. Days stand for times: "From" is the day's start, "To"
    includes its day. Once valid, ``filters`` holds what was asked for."""

    project = forms.TypedChoiceField(coerce=int, required=False, empty_value=None)

    def __init__(self, *args, projects=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = _any([(p.pk, p.name) for p in projects], "All projects")
        for name in FILTER_INPUTS:
            self.fields[name] = filter_input(name)
        self.order_fields(["project", *FILTER_INPUTS])
        for field in self.fields.values():
            field.widget.attrs.setdefault("class", "input")

    def clean(self):
        data = super().clean()
        params = {}
        for name in FILTER_INPUTS:
            value = data.get(name)
            if value in (None, ""):
                continue
            if isinstance(self.fields[name], forms.DateField):
                if not 1970 <= value.year <= 9000:
                    self.add_error(name, "Pick a date between 1970 and 9000.")
                    continue
                day = value + timedelta(days=1) if name.endswith("_before") else value
                value = _start_of(day).isoformat()
            params[name] = value
        parser = FiltersSerializer(data=params)
        if parser.is_valid():
            self.filters = parser.filters()
        else:
            for name, errors in parser.errors.items():
                self.add_error(name if name in self.fields else None, errors)
        return self.cleaned_data

    @property
    def active_count(self) -> int:
        if not self.is_bound or not hasattr(self, "cleaned_data"):
            return 0
        return sum(
            1
            for k, v in self.cleaned_data.items()
            # An unticked box or an empty choice narrows nothing.
            if v not in (None, "", [], False) and k not in ("sort", "q", "mode", "page")
        )


class SessionListForm(FiltersForm):
    sort = forms.ChoiceField(
        required=False,
        choices=[(k, label) for k, (label, _, _) in SORTS.items()],
        initial=DEFAULT_SORT,
    )


class SearchForm(FiltersForm):
    q = forms.CharField(
        required=False,
        max_length=MAX_QUERY_CHARS,
        label="Search",
        widget=forms.TextInput(
            attrs={"type": "search", "placeholder": "What did we decide about…", "autofocus": True}
        ),
    )
    mode = forms.ChoiceField(
        required=False,
        choices=[(m, m.capitalize()) for m in MODES],
        initial="hybrid",
    )
    include_archived = forms.BooleanField(required=False, label="Include archived sessions")
    page = forms.IntegerField(required=False, min_value=1)

    def clean_page(self):
        page = self.cleaned_data.get("page") or 1
        if page > MAX_SEARCH_PAGE:
            raise forms.ValidationError(
                f"Search shows the best {MAX_LIMIT} results ({MAX_SEARCH_PAGE} pages); "
                "narrow the query or the filters to see others."
            )
        return page


# The project choice of a team-level token (no project: every project of the team).
TEAM_LEVEL = 0

# Whom a token made on the tokens page acts for (docs/visibility.md).
ACTS_FOR_ME = "me"
ACTS_FOR_TEAM = "team"


class TokenForm(forms.Form):
    project = forms.TypedChoiceField(coerce=int)
    name = forms.CharField(
        max_length=100,
        required=False,
        widget=forms.TextInput(attrs={"placeholder": "e.g. claude on ci", "class": "input"}),
    )

    permissions = forms.MultipleChoiceField(
        choices=TokenPermission.choices,
        initial=default_token_permissions,
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one permission."},
    )
    acts_for = forms.ChoiceField(
        label="Acts for",
        required=False,  # not sent (an older form, a script): its maker
        initial=ACTS_FOR_ME,
        help_text="Its sessions are yours and it reads your private ones; a team token's "
        "sessions belong to the team.",
    )
    default_visibility = forms.ChoiceField(
        label="New sessions",
        required=False,
        choices=[("", "The project's default"), *Visibility.choices],
        help_text="Who reads what it captures, unless a capture says.",
    )

    def __init__(self, *args, projects=(), grantable=(), person="", **kwargs):
        """``grantable``: the permissions this person may give (what their role allows);
        ``person``: their name, for the token acting for them."""
        super().__init__(*args, **kwargs)
        self.projects = {p.pk: p for p in projects}
        self.fields["project"].choices = [(p.pk, p.name) for p in projects] + [
            (TEAM_LEVEL, "All projects (team-level: by working directory)")
        ]
        self.fields["acts_for"].choices = [
            (ACTS_FOR_ME, f"Me ({person})" if person else "Me"),
            (ACTS_FOR_TEAM, "Nobody: a team token"),
        ]
        for name in ("project", "acts_for", "default_visibility"):
            self.fields[name].widget.attrs["class"] = "input"
        self.grantable = frozenset(grantable)

    def clean_acts_for(self):
        return self.cleaned_data["acts_for"] or ACTS_FOR_ME

    def clean(self):
        cleaned = super().clean()
        chosen = cleaned.get("default_visibility")
        if chosen == Visibility.PRIVATE and cleaned.get("acts_for") == ACTS_FOR_TEAM:
            self.add_error(
                "default_visibility",
                "A team token's sessions belong to the team and cannot be private: make it "
                "act for you, or choose summary.",
            )
        project = self.projects.get(cleaned.get("project"))
        if chosen and project is not None and chosen not in project.allowed_visibilities:
            self.add_error(
                "default_visibility",
                f"{project.name} allows only {', '.join(project.allowed_visibilities)} sessions.",
            )
        return cleaned

    def clean_permissions(self):
        chosen = self.cleaned_data["permissions"]
        refused = [p for p in chosen if p not in self.grantable]
        if refused:
            raise forms.ValidationError(
                f"Only an admin of the team can give a token the '{refused[0]}' permission."
            )
        if TokenPermission.PROJECTS in chosen and self.cleaned_data.get("project") != TEAM_LEVEL:
            raise forms.ValidationError(
                "'projects' is for a team-level token (All projects): a project token stays "
                "in its project."
            )
        return [p for p in TokenPermission.values if p in chosen]


class VisibilityForm(forms.Form):
    """Who reads a session: ``choices`` are those the person may give it (its page)."""

    visibility = forms.ChoiceField(label="Visibility")

    def __init__(self, *args, choices=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["visibility"].choices = list(choices)
        self.fields["visibility"].widget.attrs["class"] = "input"


class DeleteForm(forms.Form):
    reason = forms.CharField(
        max_length=500,
        required=False,
        widget=forms.TextInput(attrs={"placeholder": "optional, kept with it", "class": "input"}),
    )


class RemoveMessageForm(forms.Form):
    reason = forms.CharField(
        max_length=500,
        widget=forms.TextInput(
            attrs={"placeholder": "e.g. contained a customer's address", "class": "input"}
        ),
        help_text="Required: kept in the deletion record.",
    )


class AnonymizeForm(forms.Form):
    """What anonymisation replaces (each on by default); ``confirm`` is asked on apply."""

    OPTIONS = {
        "remove_user_names": "People's names → User-1 …",
        "remove_project_names": "Team and project names → Project-A …",
        "remove_file_paths": "File paths → /path/…/file name",
        "remove_emails": "E-mail addresses",
        "remove_phones": "Phone numbers",
        "remove_ips": "IP addresses",
        "replace_with_placeholders": "Numbered placeholders, the same across the project "
        "(off: [REMOVED])",
        "preserve_structure": "Keep timestamps, tool-call links and metadata (off: cleared)",
    }
    confirm = forms.BooleanField(
        required=False, label="I understand the original text cannot be brought back"
    )

    def options(self) -> dict:
        return {name: self.cleaned_data[name] for name in self.OPTIONS}


for _name, _label in AnonymizeForm.OPTIONS.items():
    AnonymizeForm.base_fields[_name] = forms.BooleanField(
        required=False, initial=True, label=_label
    )
