"""Forms of the memory pages: the list's filters, an edit, a finding's resolution, a
delete's reason."""

from __future__ import annotations

from django import forms

from memories.models import MAX_CONTENT_CHARS, MemoryType

MAX_QUERY_CHARS = 2000
SEARCH_LIMIT = 50  # a search shows its best matches, ranked, on one page

STATUSES = {
    "active": "Active",
    "proposed": "Proposed (waiting for review)",
    "rejected": "Rejected",
    "superseded": "Superseded",
    "reverted": "Reverted",
    "any": "Any",
}
SORTS = {
    "open_first": "Open findings first",
    "priority": "Priority",
    "newest": "Newest first",
    "oldest": "Oldest first",
}
DEFAULT_SORT = "open_first"
CONFIDENCE = {
    MemoryType.PREFERENCE: ("explicit", "inferred", "uncertain"),
}
DEFAULT_CONFIDENCE = ("high", "medium", "low", "uncertain")
SEVERITIES = ("critical", "important", "minor")


def _input(**attrs):
    return forms.TextInput(attrs={"class": "input", **attrs})


def _select(choices, label=None, initial=""):
    return forms.ChoiceField(
        required=False,
        label=label,
        choices=choices,
        initial=initial,
        widget=forms.Select(attrs={"class": "input"}),
    )


class MemoryListForm(forms.Form):
    q = forms.CharField(
        required=False,
        max_length=MAX_QUERY_CHARS,
        label="Search",
        widget=forms.TextInput(
            attrs={
                "type": "search",
                "class": "input",
                "placeholder": "What did we decide about authentication?",
            }
        ),
    )
    project = forms.TypedChoiceField(
        coerce=int,
        required=False,
        empty_value=None,
        widget=forms.Select(attrs={"class": "input"}),
    )
    type = _select([("", "Any"), *MemoryType.choices], "Type")
    status = _select(list(STATUSES.items()), "Status", "active")
    resolution = _select(
        [("", "Any"), ("open", "Open findings"), ("resolved", "Resolved findings")],
        "Findings",
    )
    agent = forms.CharField(required=False, max_length=64, label="Agent", widget=_input())
    # docs/people.md, as the API's person= and character=: a person's memories, and what one of
    # their characters may read (its own, the shared ones, those of no agent).
    person = forms.CharField(required=False, max_length=200, label="Person", widget=_input())
    character = forms.CharField(required=False, max_length=64, label="Character", widget=_input())
    session = forms.CharField(required=False, max_length=64, widget=forms.HiddenInput)
    hide_faded = forms.BooleanField(required=False, label="Hide faded memories")
    sort = _select(list(SORTS.items()), "Sort", DEFAULT_SORT)

    def __init__(self, *args, projects=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = [("", "All projects")] + [(p.pk, p.name) for p in projects]

    @property
    def grid_fields(self):
        """The filters shown in the grid (search, sort and the checkbox have their places)."""
        names = ("project", "type", "status", "resolution", "agent", "person", "character")
        return [self[name] for name in names]

    @property
    def active_count(self) -> int:
        if not hasattr(self, "cleaned_data"):
            return 0
        data = self.cleaned_data
        return sum(
            [
                bool(data.get("project")),
                bool(data.get("type")),
                data.get("status") not in ("", "active", None),
                bool(data.get("resolution")),
                bool(data.get("agent")),
                bool(data.get("person")),
                bool(data.get("character")),
                bool(data.get("session")),
                bool(data.get("hide_faded")),
            ]
        )


class MemoryEditForm(forms.Form):
    content = forms.CharField(
        max_length=MAX_CONTENT_CHARS,
        widget=forms.Textarea(attrs={"class": "input", "rows": 5}),
    )
    topic = forms.CharField(
        required=False,
        max_length=100,
        widget=_input(placeholder="e.g. mfa_requirements"),
        help_text="A key: a newer memory of the same type and topic that says otherwise "
        "replaces this one.",
    )
    tags = forms.CharField(
        required=False,
        max_length=1000,
        widget=_input(placeholder="security, authentication"),
        help_text="Separated by commas.",
    )
    confidence = _select([], "Confidence")
    severity = _select([("", "—"), *((s, s.capitalize()) for s in SEVERITIES)], "Severity")

    def __init__(self, *args, memory, **kwargs):
        initial = {
            "content": memory.content,
            "topic": memory.topic,
            "tags": ", ".join(memory.tags),
            "confidence": memory.confidence,
            "severity": memory.severity,
        }
        super().__init__(*args, initial=initial, **kwargs)
        options = list(CONFIDENCE.get(memory.type, DEFAULT_CONFIDENCE))
        if memory.confidence and memory.confidence not in options:
            options.append(memory.confidence)  # keep what an agent wrote selectable
        self.fields["confidence"].choices = [("", "—"), *((c, c.capitalize()) for c in options)]
        if memory.type != MemoryType.FINDING:
            del self.fields["severity"]
        elif memory.severity and memory.severity not in SEVERITIES:
            self.fields["severity"].choices.append((memory.severity, memory.severity))

    def clean_tags(self):
        return [t.strip() for t in self.cleaned_data["tags"].split(",") if t.strip()]


class ResolveForm(forms.Form):
    action_taken = forms.CharField(
        max_length=1000,
        label="Action taken",
        widget=_input(placeholder="e.g. added an MFA requirement for admins"),
    )
    verification = forms.CharField(
        required=False,
        max_length=1000,
        widget=_input(placeholder="optional: how it was checked, a commit"),
    )


class MemoryDeleteForm(forms.Form):
    reason = forms.CharField(
        max_length=500,
        widget=_input(placeholder="e.g. extracted by mistake"),
        help_text="Required: kept with the deleted memory.",
    )


class MemoryBulkDeleteForm(forms.Form):
    """Which memories to move to the trash at once (docs/memories.md: by topic, date range,
    agent, person, type). Dates are days (UTC), both ends included."""

    project = forms.TypedChoiceField(
        coerce=int,
        required=False,
        empty_value=None,
        widget=forms.Select(attrs={"class": "input"}),
    )
    topic = forms.CharField(
        required=False, max_length=100, widget=_input(placeholder="e.g. mfa_requirements")
    )
    type = _select([("", "Any"), *MemoryType.choices], "Type")
    agent = forms.CharField(required=False, max_length=64, widget=_input())
    person = forms.CharField(required=False, max_length=200, widget=_input())
    since = forms.DateField(
        required=False,
        label="Said from",
        widget=forms.DateInput(attrs={"type": "date", "class": "input"}),
    )
    until = forms.DateField(
        required=False,
        label="Said up to (included)",
        widget=forms.DateInput(attrs={"type": "date", "class": "input"}),
    )
    all = forms.BooleanField(
        required=False,
        label="No filter: every memory of the project (or of all projects)",
    )
    reason = forms.CharField(
        required=False,
        max_length=500,
        widget=_input(placeholder="e.g. Privacy - removing work discussion"),
        help_text="Required to delete: kept with the memories and in the deletion record.",
    )

    NARROWING = ("topic", "type", "agent", "person", "since", "until")

    def __init__(self, *args, projects=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = [("", "All projects")] + [(p.pk, p.name) for p in projects]

    @property
    def filter_fields(self):
        return [self[name] for name in ("project", *self.NARROWING, "all")]

    def clean(self):
        data = super().clean()
        since, until = data.get("since"), data.get("until")
        if since and until and until < since:
            self.add_error("until", f"Pick a day on or after {since:%b %-d, %Y} (Said from).")
        narrowing = any(data.get(name) for name in self.NARROWING)
        if not narrowing and not data.get("all"):
            self.add_error(
                "all",
                "Pick at least one filter (topic, type, agent, person, dates), or tick this "
                "to delete every memory.",
            )
        return data
