"""The stable ``code`` every API error body carries beside its ``detail``.

``detail`` is for people and may be reworded; ``code`` is for programs and never changes
meaning. MEM_E001–MEM_E007 are the memory system's own failures; the rest name the kind of
refusal every HTTP API has. ``core.api_errors`` picks the code of each answer; the
OpenAPI schema lists them as an enum; docs/api.md has the table.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """Each code with what it means, in one line (the schema's enum and docs/api.md say it)."""

    meaning: str

    def __new__(cls, value: str, meaning: str):
        member = str.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        return member

    # The memory system's own failures.
    QUOTA_EXCEEDED = "MEM_E001", "the session would pass its project's size quota"
    LOCK_TIMEOUT = "MEM_E002", "the rows it needs stayed locked too long (retry)"
    CORRUPTION_DETECTED = "MEM_E003", "the database reported damaged data or index"
    INVALID_QUERY = "MEM_E004", "a search, context or entity parameter is wrong"
    SESSION_NOT_FOUND = "MEM_E005", "no such session among the caller's"
    COMPACTION_FAILED = "MEM_E006", "compacting the session could not make room"
    RECOVERY_WINDOW_PASSED = "MEM_E007", "the deleted memory's recovery deadline has passed"

    # The request as sent.
    VALIDATION_ERROR = "MEM_E100", "a field or parameter is wrong; the body names it"
    MALFORMED_REQUEST = "MEM_E101", "the body or a header could not be read at all"
    IMPORT_UNREADABLE = "MEM_E102", "an uploaded transcript is not in a format it reads"
    TOO_LARGE = "MEM_E103", "the body or upload is over a limit; the body gives it"
    UNSUPPORTED_MEDIA_TYPE = "MEM_E104", "a Content-Type this endpoint does not take"

    # Who is asking.
    NOT_AUTHENTICATED = "MEM_E110", "no valid token or session"
    PERMISSION_DENIED = "MEM_E111", "the person's role is too low, or CSRF was missing"
    TOKEN_PERMISSION_MISSING = "MEM_E112", "the API token lacks the permission named"

    # What is asked for.
    NOT_FOUND = "MEM_E120", "no such URL, project or object (other than a session)"
    METHOD_NOT_ALLOWED = "MEM_E121", "the URL exists; the method does not"
    NOT_ACCEPTABLE = "MEM_E122", "the Accept header names nothing this API answers"
    CONFLICT = "MEM_E130", "the object is not in the state the action needs"
    RATE_LIMITED = "MEM_E140", "too many requests; wait for Retry-After"

    # The server.
    SERVICE_UNAVAILABLE = "MEM_E150", "PostgreSQL or the broker is down; retry"
    INTERNAL_ERROR = "MEM_E151", "a bug, logged with the request id"


def choices() -> list[tuple[str, str]]:
    """The codes as the OpenAPI schema's enum lists them, each with its meaning."""
    return [(code.value, f"{code.name}: {code.meaning}") for code in ErrorCode]


# The code of an answer nothing more specific describes, by its HTTP status.
BY_STATUS = {
    400: ErrorCode.VALIDATION_ERROR,
    401: ErrorCode.NOT_AUTHENTICATED,
    403: ErrorCode.PERMISSION_DENIED,
    404: ErrorCode.NOT_FOUND,
    405: ErrorCode.METHOD_NOT_ALLOWED,
    406: ErrorCode.NOT_ACCEPTABLE,
    409: ErrorCode.CONFLICT,
    413: ErrorCode.TOO_LARGE,
    415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    429: ErrorCode.RATE_LIMITED,
    503: ErrorCode.SERVICE_UNAVAILABLE,
}


def code_for_status(status: int) -> ErrorCode:
    if status in BY_STATUS:
        return BY_STATUS[status]
    return ErrorCode.VALIDATION_ERROR if status < 500 else ErrorCode.INTERNAL_ERROR


def own_code(exc: BaseException | None) -> ErrorCode | None:
    """The code an exception carries itself (``code = ErrorCode.X`` or the string), if it is
    one of ours: other libraries' ``code`` attributes (Django's ValidationError) mean
    something else."""
    value = getattr(exc, "code", None)
    return ErrorCode(value) if isinstance(value, str) and value in _VALUES else None


_VALUES = frozenset(ErrorCode)
