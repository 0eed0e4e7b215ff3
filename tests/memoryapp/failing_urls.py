"""The app's URLs plus views that fail on purpose (tests/memoryapp/test_api_errors.py)."""

from django.db import connection
from django.urls import path
from rest_framework.decorators import (
    api_view,
    authentication_classes,
    permission_classes,
    throttle_classes,
)
from rest_framework.throttling import BaseThrottle

from memoryapp.urls import handler400, handler403, handler404, handler500, urlpatterns
from sessions.capture.service import CaptureError

__all__ = ["handler400", "handler403", "handler404", "handler500", "urlpatterns"]


class Boom(Exception):
    pass


def django_view_that_raises(request):
    raise Boom("secret internals: password=hunter2")


@api_view(["GET", "POST"])
@authentication_classes([])
@permission_classes([])
def drf_view_that_raises(request):
    raise Boom("secret internals: password=hunter2")


@api_view(["GET"])
@authentication_classes([])
@permission_classes([])
def drf_view_reading_damaged_data(request):
    # PostgreSQL's own error for a damaged page, raised for real by the server.
    with connection.cursor() as cursor:
        cursor.execute(
            "DO $$ BEGIN RAISE EXCEPTION 'invalid page in block 7 of relation base/1/2' "
            "USING ERRCODE = 'data_corrupted'; END $$"
        )


class CompactionFailed(CaptureError):
    """What quota compaction raises when it cannot make room (built elsewhere; its shape)."""

    code = "MEM_E006"


@api_view(["POST"])
@authentication_classes([])
@permission_classes([])
def drf_view_whose_compaction_fails(request):
    raise CompactionFailed("compaction could not free enough room", status=413)


class Refuse(BaseThrottle):
    def allow_request(self, request, view):
        return False

    def wait(self):
        return 42


@api_view(["GET"])
@authentication_classes([])
@permission_classes([])
@throttle_classes([Refuse])
def drf_view_that_is_throttled(request):
    raise AssertionError("never reached")


urlpatterns = [
    path("api/v1/test-raises", drf_view_that_raises),
    path("api/v1/test-corrupted", drf_view_reading_damaged_data),
    path("api/v1/test-compaction-fails", drf_view_whose_compaction_fails),
    path("api/v1/test-throttled", drf_view_that_is_throttled),
    path("api/v1/test-raises-django", django_view_that_raises),
    path("ui-raises", django_view_that_raises),
    *urlpatterns,
]
