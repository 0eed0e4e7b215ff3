"""Memory lists by cursor, in the order the caller asked for (``sort=``)."""

from sessions.api.pagination import StrictLimitPagination


class MemoryCursorPagination(StrictLimitPagination):
    ordering = ("-priority", "-id")
    page_size = 50
    max_page_size = 500

    def get_ordering(self, request, queryset, view):
        return view.ordering() if hasattr(view, "ordering") else self.ordering
