"""Every error the API answers is JSON ``{"detail": ..., "code": ...}``; the UI keeps its HTML
pages. ``detail`` says what went wrong for a person; ``code`` (``memoryapp.error_codes``) is
stable for programs: the exception's own ``code`` when it carries one of ours, else one by its
kind (``CODE_BY_TYPE``), else one by the HTTP status (``error_code``).

One mapping, whatever raised the error:

- inside a DRF view, the domain's errors (``domain_error_response``: a capture refused, an
  unreadable upload, a session not in the state an action needs) and DRF's own exceptions
  (validation, authentication, permission, 404, …) become JSON through ``exception_handler``
  (REST_FRAMEWORK's EXCEPTION_HANDLER); anything else DRF re-raises, to Django;
- everything else — URL resolution, middleware, authentication, a plain Django view, and what
  DRF re-raised — reaches Django's ``handler400``/``403``/``404``/``500`` (set in
  ``memoryapp/urls.py`` to the functions below), which answer JSON under ``JSON_PATHS`` and
  Django's HTML pages elsewhere;
- ``JsonErrorsMiddleware`` turns the few error *responses* Django builds without raising
  (a 405 from ``require_GET``, a CSRF refusal) into JSON on the same paths.

A database or broker that cannot be reached is not a bug: it answers 503 with
``Retry-After`` and a message a person can act on (a plain HTML page on UI paths), and is
logged as one line, not a traceback per request. So is a PostgreSQL lock timeout (SQLSTATE
55P03, when an operator sets ``lock_timeout``; the app sets none): 503, MEM_E002. Damaged
data or index reported by PostgreSQL (XX001/XX002) is a 500 with MEM_E003. Any other
unhandled exception answers 500 with a short message and a request id; the traceback is
logged with that id, never sent.
With ``DEBUG`` on, Django shows its debug page instead of calling ``handler500``.
"""

from __future__ import annotations

import logging
import secrets
import sys

import psycopg
import psycopg_pool
from django.conf import settings
from django.core.exceptions import (
    BadRequest,
    DisallowedHost,
    RequestDataTooBig,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.db import InterfaceError as DjangoInterfaceError
from django.http import HttpResponse, JsonResponse
from django.views import defaults
from kombu.exceptions import OperationalError as BrokerOperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from memories.capture.record import InvalidMemory, MemoryConflict
from memoryapp.error_codes import ErrorCode, code_for_status, own_code
from sessions.capture.service import CaptureError, QuotaExceeded
from sessions.forget.lifecycle import LifecycleConflict
from transcripts.base import ImportFormatError, ImportTooLarge

logger = logging.getLogger(__name__)

#: Paths whose clients parse JSON: the API, the health check, an MCP endpoint if there is one.
JSON_PATHS = ("/api/", "/healthz", "/mcp")
#: How long a client should wait before retrying when a server it needs is down.
RETRY_AFTER_SECONDS = 30

# Server-side SQLSTATEs that mean "no usable connection" (not "this statement failed"):
# class 08 (connection exception), admin/crash shutdown, starting up, too many connections.
_UNAVAILABLE_SQLSTATES = ("57P01", "57P02", "57P03", "53300")

# The code of an exception that carries none of its own, by its kind (first match wins).
CODE_BY_TYPE = (
    (QuotaExceeded, ErrorCode.QUOTA_EXCEEDED),
    (ImportTooLarge, ErrorCode.TOO_LARGE),
    (ImportFormatError, ErrorCode.IMPORT_UNREADABLE),
    (LifecycleConflict, ErrorCode.CONFLICT),
    (MemoryConflict, ErrorCode.CONFLICT),
    (exceptions.ParseError, ErrorCode.MALFORMED_REQUEST),
    (psycopg.errors.LockNotAvailable, ErrorCode.LOCK_TIMEOUT),
    (psycopg.errors.DataCorrupted | psycopg.errors.IndexCorrupted, ErrorCode.CORRUPTION_DETECTED),
)


def error_code(exc: BaseException | None, status_code: int) -> ErrorCode:
    """The stable code of an error answer: what ``exc`` (or what it was raised from)
    carries or is, else what its HTTP status means."""
    for error in _causes(exc):
        code = own_code(error)
        if code is not None:
            return code
        for kind, code in CODE_BY_TYPE:
            if isinstance(error, kind):
                return code
    return code_for_status(status_code)


def with_code(data, code: ErrorCode) -> dict:
    """An error body with its ``code``: beside ``detail``, or beside the fields in error."""
    if isinstance(data, list):  # DRF's ValidationError("…") without a field
        data = {"detail": " ".join(str(item) for item in data)}
    return {**data, "code": code.value}


def error_json(status_code: int, detail: str, code: ErrorCode | None = None, **extra):
    """A JSON error answered outside DRF (Django's handlers, the middlewares)."""
    body = {"detail": detail, "code": (code or code_for_status(status_code)).value, **extra}
    return JsonResponse(body, status=status_code)


UNAVAILABLE_MESSAGES = {
    "database": "The database (PostgreSQL) cannot be reached right now, so this request was "
    f"not completed. Try again in {RETRY_AFTER_SECONDS} seconds (Retry-After); captures are "
    "safe to re-send with the same external_id / client_id. If it lasts, ask your "
    "administrator to check PostgreSQL (GET /healthz shows what is down).",
    "broker": "The task queue (Redis) cannot be reached right now, so this request was not "
    f"completed. Try again in {RETRY_AFTER_SECONDS} seconds (Retry-After). If it lasts, ask "
    "your administrator to check Redis (GET /healthz shows what is down).",
    "lock": "The rows this request needs stayed locked by another operation longer than the "
    "database's lock_timeout, so nothing was changed. Try again in "
    f"{RETRY_AFTER_SECONDS} seconds (Retry-After) with the same request.",
}
# What each kind of outage says in the body's ``unavailable`` and ``code``.
UNAVAILABLE_CODES = {
    "database": ("database", ErrorCode.SERVICE_UNAVAILABLE),
    "broker": ("broker", ErrorCode.SERVICE_UNAVAILABLE),
    "lock": ("database", ErrorCode.LOCK_TIMEOUT),
}


def exception_handler(exc, context):
    """DRF's handler, after the domain's errors. What it returns None for (an unexpected
    exception, the database down) DRF re-raises, and Django hands it to ``server_error``
    below: one mapping for both."""
    response = domain_error_response(exc)
    if response is None:
        response = drf_exception_handler(exc, context)
    if response is not None:
        response.data = with_code(response.data, error_code(exc, response.status_code))
    return response


def domain_error_response(exc: BaseException) -> Response | None:
    """The answer to an error the domain raises when a request cannot be done as asked,
    or None for any other exception. The status is the error's own where it has one;
    ``exception_handler`` adds the ``code``."""
    if isinstance(exc, ImportFormatError):
        return Response(exc.as_dict(), status=exc.status)  # with the line and field
    if isinstance(exc, CaptureError):
        body = {"detail": str(exc)}
        for name in ("session_bytes", "quota_bytes"):  # what a quota refusal measured
            if hasattr(exc, name):
                body[name] = getattr(exc, name)
        return Response(body, status=exc.status)
    if isinstance(exc, LifecycleConflict):  # with the state it is in (in the trash, since…)
        return Response({"detail": str(exc), **exc.state}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, InvalidMemory):  # a memory that cannot be written, by its field
        return Response({exc.field: [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, MemoryConflict):  # a supersedes cycle, a restore too late…
        return Response({"detail": str(exc), **exc.state}, status=status.HTTP_409_CONFLICT)
    return None


def wants_json(request) -> bool:
    return request.path_info.startswith(JSON_PATHS)


def _causes(exc: BaseException):
    """``exc`` and what it was raised from or while handling (Django wraps driver errors)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _database_unreachable(error: BaseException) -> bool:
    if isinstance(error, DjangoInterfaceError | psycopg.InterfaceError | psycopg_pool.PoolTimeout):
        return True
    if not isinstance(error, psycopg.OperationalError):
        return False
    # A plain OperationalError carries no server SQLSTATE: the connection failed or was lost
    # on the client side. Its subclasses are statement errors (deadlock, statement timeout,
    # …) except the connection-level ones below.
    sqlstate = getattr(error, "sqlstate", None) or ""
    return (
        type(error) is psycopg.OperationalError
        or sqlstate.startswith("08")
        or sqlstate in _UNAVAILABLE_SQLSTATES
    )


def unavailable_service(exc: BaseException) -> str | None:
    """ "database" or "broker" when ``exc`` means that server cannot be reached, "lock" when
    a lock wait timed out, else None."""
    for error in _causes(exc):
        if _database_unreachable(error):
            return "database"
        if isinstance(error, psycopg.errors.LockNotAvailable):
            return "lock"
        if isinstance(error, BrokerOperationalError | RedisConnectionError | RedisTimeoutError):
            return "broker"
    return None


def service_unavailable(request, service: str, exc: BaseException) -> HttpResponse:
    message = UNAVAILABLE_MESSAGES[service]
    if wants_json(request):
        unavailable, code = UNAVAILABLE_CODES[service]
        response = error_json(
            503, message, code, unavailable=unavailable, retry_after=RETRY_AFTER_SECONDS
        )
    else:
        # No template: rendering the site's pages would ask the database again.
        response = HttpResponse(
            "<!doctype html><meta charset='utf-8'><title>Service unavailable</title>"
            f"<h1>Service unavailable</h1><p>{message}</p>",
            status=503,
        )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    # One line per request during an outage, not a traceback each (Django would log one).
    logger.warning(
        "%s %s: %s unavailable (%s: %s)",
        request.method,
        request.path,
        service,
        type(exc).__name__,
        str(exc).strip().splitlines()[0] if str(exc).strip() else "",
    )
    response._has_been_logged = True
    return response


def server_error(request):
    """``handler500``: Django calls it inside its ``except`` block, so ``sys.exc_info()``
    is the exception being handled."""
    exc = sys.exc_info()[1]
    service = unavailable_service(exc) if exc is not None else None
    if service:
        return service_unavailable(request, service, exc)
    request_id = secrets.token_hex(8)
    if wants_json(request):
        response = error_json(
            500,
            "Internal server error: the request failed on the server and was "
            f"logged as request {request_id}. Try again later; if it keeps failing, give "
            "that id to your administrator.",
            error_code(exc, 500),
            request_id=request_id,
        )
    else:
        response = defaults.server_error(request)
    response["X-Request-ID"] = request_id
    logger.error("request %s failed: %s %s", request_id, request.method, request.path, exc_info=exc)
    response._has_been_logged = True  # logged above, with the id; Django would log it again
    return response


def request_too_big(request, exception) -> JsonResponse:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE  # MAX_REQUEST_BYTES sets it
    return error_json(
        413,
        f"The request body is over {limit:,} bytes, the most this server accepts "
        "(MAX_REQUEST_BYTES). Split the upload.",
        limit_bytes=limit,
    )


def bad_request(request, exception):
    """``handler400``: malformed or refused requests (Django's SuspiciousOperation family)."""
    if isinstance(exception, RequestDataTooBig):
        return request_too_big(request, exception)
    if not wants_json(request):
        return defaults.bad_request(request, exception)
    if isinstance(exception, DisallowedHost):
        detail = "The Host header names a host this server does not answer to (ALLOWED_HOSTS)."
    elif isinstance(exception, BadRequest | TooManyFieldsSent | TooManyFilesSent):
        detail = f"Bad request: {exception}"
    else:
        detail = "Bad request: it was refused as malformed or unsafe."
    return error_json(400, detail, ErrorCode.MALFORMED_REQUEST)


def permission_denied(request, exception):
    """``handler403``."""
    if not wants_json(request):
        return defaults.permission_denied(request, exception)
    detail = str(exception) or "You do not have permission to do this."
    return error_json(403, detail)


def page_not_found(request, exception):
    """``handler404``: also every unknown URL under /api/."""
    if not wants_json(request):
        return defaults.page_not_found(request, exception)
    return error_json(404, f"Not found: {request.path} (the API is described at /api/docs/).")
