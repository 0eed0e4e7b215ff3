"""Request-level guards: a size limit on bodies, and JSON for every error under the API."""

from django.conf import settings

from core.api_errors import error_json, wants_json
from core.error_codes import ErrorCode


class RequestSizeLimitMiddleware:
    """Refuse request bodies over MAX_REQUEST_BYTES with a 413 before reading them."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return error_json(400, "Content-Length is not a number.", ErrorCode.MALFORMED_REQUEST)
        limit = settings.MAX_REQUEST_BYTES
        if length > limit:
            return error_json(
                413,
                f"The request body is {length:,} bytes; this server accepts at "
                f"most {limit:,} (MAX_REQUEST_BYTES). Split the upload.",
                request_bytes=length,
                limit_bytes=limit,
            )
        return self.get_response(request)


class JsonErrorsMiddleware:
    """On API paths, an error response Django built without raising (405 from
    ``require_GET``, a CSRF refusal, …) gets a JSON body; raised errors are already JSON
    (``core/api_errors.py``). Status and headers (``Allow``, ``Retry-After``) are kept."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code < 400 or not wants_json(request) or _is_json(response):
            return response
        detail = f"{response.status_code} {response.reason_phrase}."
        if response.has_header("Allow"):
            detail += f" Allowed methods: {response['Allow']}."
        replacement = error_json(response.status_code, detail)
        for header, value in response.items():
            if header.lower() not in ("content-type", "content-length"):
                replacement[header] = value
        replacement.cookies = response.cookies
        return replacement


def _is_json(response) -> bool:
    content_type = response.get("Content-Type", "").split(";")[0].strip().lower()
    return content_type == "application/json" or content_type.endswith("+json")
