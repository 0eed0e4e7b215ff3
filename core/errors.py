"""The base of every error the domain raises when a request cannot be done as asked.

A ``DomainError`` carries what the API answers: its HTTP ``status``, its stable ``code``
(``core.error_codes``; None: the one its status means) and its ``body`` (``detail`` and
whatever a client needs to act: the line and field of a bad upload, the state a conflict
found). So the one handler (``core.api_errors``) answers any app's errors without importing
the app, as zulip's ``JsonableError`` does. Plain Python, no Django: the transcript parsers
raise these too.
"""

from __future__ import annotations

from typing import Any

from core.error_codes import ErrorCode


class DomainError(Exception):
    status: int = 400
    code: ErrorCode | str | None = None

    def body(self) -> dict[str, Any]:
        return {"detail": str(self)}
