"""Filters of the session list (API and UI share them)."""

import django_filters
from django.db.models import Exists, OuterRef

from sessions.api.serializers import validate_utc_offset
from sessions.models import Entity, EntityType, Lifecycle, Session, SessionStatus, SourceFormat


class SessionFilter(django_filters.FilterSet):
    project = django_filters.CharFilter(method="filter_project", help_text="'team/project' or id")
    agent = django_filters.CharFilter(field_name="agent_name", method="filter_lower")
    workflow = django_filters.CharFilter()
    status = django_filters.ChoiceFilter(choices=SessionStatus.choices)
    lifecycle = django_filters.ChoiceFilter(choices=Lifecycle.choices)
    source_format = django_filters.ChoiceFilter(choices=SourceFormat.choices)
    started_after = django_filters.IsoDateTimeFilter(
        field_name="started_at", lookup_expr="gte", validators=[validate_utc_offset]
    )
    started_before = django_filters.IsoDateTimeFilter(
        field_name="started_at", lookup_expr="lt", validators=[validate_utc_offset]
    )
    ended_after = django_filters.IsoDateTimeFilter(
        field_name="ended_at", lookup_expr="gte", validators=[validate_utc_offset]
    )
    ended_before = django_filters.IsoDateTimeFilter(
        field_name="ended_at", lookup_expr="lt", validators=[validate_utc_offset]
    )
    topic = django_filters.CharFilter(method="filter_topic")
    entity_type = django_filters.ChoiceFilter(choices=EntityType.choices, method="filter_entity")
    entity = django_filters.CharFilter(
        method="filter_entity", help_text="sessions that touched this entity (e.g. src/auth.py)"
    )

    class Meta:
        model = Session
        fields = []

    def filter_project(self, queryset, name, value):
        if value.isdigit():
            return queryset.filter(project_id=int(value))
        team_slug, _, project_slug = value.partition("/")
        return queryset.filter(project__team__slug=team_slug, project__slug=project_slug)

    def filter_lower(self, queryset, name, value):
        return queryset.filter(**{name: value.strip().lower()})

    def filter_topic(self, queryset, name, value):
        return queryset.filter(topics__contains=[value.strip()])

    def filter_entity(self, queryset, name, value):
        # Both entity and entity_type arrive here; apply them together, once.
        if getattr(self, "_entity_applied", False):
            return queryset
        self._entity_applied = True
        entities = Entity.objects.filter(session=OuterRef("pk"))
        entity_type = self.form.cleaned_data.get("entity_type")
        entity_value = self.form.cleaned_data.get("entity")
        if entity_type:
            entities = entities.filter(type=entity_type)
        if entity_value:
            entities = entities.filter(normalized=entity_value.strip().lower())
        return queryset.filter(Exists(entities))
