"""The sessions API's own answers to a session it cannot give."""

from rest_framework import exceptions

from core.error_codes import ErrorCode


class SessionNotFound(exceptions.NotFound):
    """404: no session by that id among the caller's (another team's is not theirs)."""

    code = ErrorCode.SESSION_NOT_FOUND
    default_detail = "No such session in your projects."
