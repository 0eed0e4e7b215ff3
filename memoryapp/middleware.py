"""Refuse request bodies over MAX_REQUEST_BYTES with a 413 before reading them."""

from django.conf import settings
from django.http import JsonResponse


class RequestSizeLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return JsonResponse({"detail": "Content-Length is not a number."}, status=400)
        limit = settings.MAX_REQUEST_BYTES
        if length > limit:
            return JsonResponse(
                {
                    "detail": f"The request body is {length:,} bytes; this server accepts at "
                    f"most {limit:,} (MAX_REQUEST_BYTES). Split the upload.",
                    "request_bytes": length,
                    "limit_bytes": limit,
                },
                status=413,
            )
        return self.get_response(request)
