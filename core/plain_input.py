"""Input the schema calls wrong and DRF would let through quietly.

Two cases: a text field given a number (DRF's ``CharField`` turns 5 into "5", while the
schema says string), and a parameter that takes one value given several times in a query
string (a ``QueryDict`` hands the serializer the last one and drops the others). Both are
a 400 naming the field, like any other wrong value, so an agent learns of its mistake
instead of having it guessed away.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.http import QueryDict
from rest_framework import serializers

# Fields that take several values: repeated in a query string is how they are given.
MULTIPLE = (serializers.ListField, serializers.MultipleChoiceField)


class PlainInputMixin:
    """For request serializers (put it before ``serializers.Serializer``)."""

    def to_internal_value(self, data):
        errors = {}
        for name, field in self.fields.items():
            if field.read_only:
                continue
            if isinstance(data, QueryDict):
                given = len(data.getlist(name))
                if given > 1 and not isinstance(field, MULTIPLE):
                    errors[name] = [f"given {given} times; give it once"]
            elif isinstance(data, Mapping) and isinstance(field, serializers.CharField):
                value = data.get(name)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    errors[name] = [f"must be text (a JSON string), not the number {value!r}"]
        if errors:
            raise serializers.ValidationError(errors)
        return super().to_internal_value(data)
