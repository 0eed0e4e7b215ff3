"""Cursor pagination: stable under inserts and fast at any depth (no OFFSET, no COUNT)."""

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import CursorPagination


class StrictLimitPagination(CursorPagination):
    """``?limit=`` is a whole number of at least 1 (above the maximum it is capped); any other
    value is a 400 naming it, not silently the default page size. Empty means not given."""

    page_size_query_param = "limit"

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param, "")
        if raw == "":
            return self.page_size
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if value < 1:
            raise ValidationError(
                {
                    self.page_size_query_param: f"must be a whole number from 1 to "
                    f"{self.max_page_size}, not {raw!r}"
                }
            )
        return min(value, self.max_page_size)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"] = {"type": "integer", "minimum": 1}
                parameter["description"] = (
                    f"Results per page: {self.page_size} unless given, at most "
                    f"{self.max_page_size} (larger values are capped)."
                )
        return parameters


class SessionCursorPagination(StrictLimitPagination):
    ordering = ("-started_at", "-id")
    page_size = 50
    max_page_size = 500


class MessageCursorPagination(StrictLimitPagination):
    ordering = ("seq",)
    page_size = 200
    max_page_size = 2000
