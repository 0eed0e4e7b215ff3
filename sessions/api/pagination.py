"""Cursor pagination: stable under inserts and fast at any depth (no OFFSET, no COUNT)."""

from rest_framework.pagination import CursorPagination


class SessionCursorPagination(CursorPagination):
    ordering = ("-started_at", "-id")
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 500


class MessageCursorPagination(CursorPagination):
    ordering = ("seq",)
    page_size = 200
    page_size_query_param = "limit"
    max_page_size = 2000
