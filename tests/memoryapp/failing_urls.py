"""The app's URLs plus views that fail on purpose (tests/memoryapp/test_api_errors.py)."""

from django.urls import path
from rest_framework.decorators import api_view, authentication_classes, permission_classes

from memoryapp.urls import handler400, handler403, handler404, handler500, urlpatterns

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


urlpatterns = [
    path("api/v1/test-raises", drf_view_that_raises),
    path("api/v1/test-raises-django", django_view_that_raises),
    path("ui-raises", django_view_that_raises),
    *urlpatterns,
]
