"""Forms of the UI. The session list's filters are applied by the API's ``SessionFilter``;
these forms only render the inputs and check what the filter cannot (date order, lengths)."""

from __future__ import annotations

from datetime import datetime, time, timedelta

from django import forms
from django.utils import timezone

from search.service import MAX_LIMIT, MODES
from sessions.models import EntityType, Lifecycle, Role, SessionStatus, SourceFormat
from web.pagination import DEFAULT_SORT, SORTS

MAX_QUERY_CHARS = 2000  # as the search API
SEARCH_PAGE_SIZE = 20
MAX_SEARCH_PAGE = MAX_LIMIT // SEARCH_PAGE_SIZE


def _any(choices, label="Any"):
    return [("", label), *choices]


def _start_of(day):
    return timezone.make_aware(datetime.combine(day, time.min), timezone.get_current_timezone())


class FiltersForm(forms.Form):
    """The filters the session list and the search page share."""

    project = forms.TypedChoiceField(coerce=int, required=False, empty_value=None)
    agent = forms.CharField(required=False, max_length=64)
    workflow = forms.CharField(required=False, max_length=100)
    status = forms.ChoiceField(required=False, choices=_any(SessionStatus.choices))
    lifecycle = forms.ChoiceField(required=False, choices=_any(Lifecycle.choices))
    source_format = forms.ChoiceField(
        required=False, choices=_any(SourceFormat.choices), label="Source"
    )
    started_after = forms.DateField(
        required=False, label="From", widget=forms.DateInput(attrs={"type": "date"})
    )
    started_before = forms.DateField(
        required=False, label="To", widget=forms.DateInput(attrs={"type": "date"})
    )
    topic = forms.CharField(required=False, max_length=64)
    entity_type = forms.ChoiceField(
        required=False, choices=_any(EntityType.choices), label="Entity type"
    )
    entity = forms.CharField(
        required=False, max_length=500, widget=forms.TextInput(attrs={"placeholder": "src/auth.py"})
    )

    def __init__(self, *args, projects=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = _any([(p.pk, p.name) for p in projects], "All projects")
        for field in self.fields.values():
            field.widget.attrs.setdefault("class", "input")

    def clean(self):
        data = super().clean()
        after, before = data.get("started_after"), data.get("started_before")
        if after and before and after > before:
            self.add_error("started_before", "The end date is before the start date.")
        for name in ("started_after", "started_before"):
            day = data.get(name)
            if day and not 1970 <= day.year <= 9000:
                self.add_error(name, "Pick a date between 1970 and 9000.")
        return data

    def date_range(self):
        """(aware start, aware exclusive end) of the picked days; the end day is included."""
        data = self.cleaned_data
        after = data.get("started_after")
        before = data.get("started_before")
        return (
            _start_of(after) if after else None,
            _start_of(before + timedelta(days=1)) if before else None,
        )

    @property
    def active_count(self) -> int:
        if not self.is_bound or not hasattr(self, "cleaned_data"):
            return 0
        return sum(
            1
            for k, v in self.cleaned_data.items()
            if v not in (None, "") and k not in ("sort", "q", "mode", "page")
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
    role = forms.ChoiceField(required=False, choices=_any(Role.choices), label="Speaker")
    page = forms.IntegerField(required=False, min_value=1)

    def clean_page(self):
        page = self.cleaned_data.get("page") or 1
        if page > MAX_SEARCH_PAGE:
            raise forms.ValidationError(
                f"Search shows the best {MAX_LIMIT} results ({MAX_SEARCH_PAGE} pages); "
                "narrow the query or the filters to see others."
            )
        return page


class TokenForm(forms.Form):
    project = forms.TypedChoiceField(coerce=int)
    name = forms.CharField(
        max_length=100,
        required=False,
        widget=forms.TextInput(attrs={"placeholder": "e.g. claude on ci", "class": "input"}),
    )

    def __init__(self, *args, projects=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = [(p.pk, p.name) for p in projects]
        self.fields["project"].widget.attrs["class"] = "input"


class DeleteForm(forms.Form):
    reason = forms.CharField(
        max_length=500,
        required=False,
        widget=forms.TextInput(attrs={"placeholder": "optional, kept with it", "class": "input"}),
    )
