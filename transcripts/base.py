"""The shape every importer produces, and the error every importer raises.

Importers are pure functions from bytes to ``ParsedSession`` objects: they never touch
the database. The capture service (``sessions/services``) turns what they return into
rows in one transaction, so a file either imports whole or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core.error_codes import ErrorCode
from core.errors import DomainError

ROLES = ("user", "assistant", "system", "tool")
STATUSES = ("completed", "interrupted", "error", "active")


class ImportFormatError(DomainError, ValueError):
    """The input cannot be read as the named (or detected) format.

    ``line`` is the 1-based line number (for line-oriented formats) and ``field`` the
    JSON field or path that was wrong, when known; both end up in the API's 400 answer.
    """

    status = 400  # the HTTP status the API answers with
    code = ErrorCode.IMPORT_UNREADABLE

    def __init__(self, message: str, *, line: int | None = None, field: str | None = None):
        self.message = message
        self.line = line
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        where = []
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.field:
            where.append(f"field '{self.field}'")
        return f"{', '.join(where)}: {self.message}" if where else self.message

    def body(self) -> dict[str, Any]:
        return {"detail": str(self), "line": self.line, "field": self.field}


class ImportTooLarge(ImportFormatError):
    """The input would expand past a limit (a zip bomb, or just too much): the API answers
    413 with ``numbers`` (what was measured, against which limit) beside the message."""

    status = 413
    code = ErrorCode.TOO_LARGE

    def __init__(self, message: str, *, numbers: dict[str, Any], field: str | None = None):
        self.numbers = numbers
        super().__init__(message, field=field)

    def body(self) -> dict[str, Any]:
        return {**super().body(), **self.numbers}


@dataclass(frozen=True)
class UnzipLimits:
    """How far an archive may expand. Every limit is checked against the sizes the archive
    declares before anything is decompressed, and again while it is read (never trusting
    the declaration), so no more than a limit and one chunk is ever held."""

    member_bytes: int = 100 * 1024 * 1024  # one file of the archive, decompressed
    total_bytes: int = 200 * 1024 * 1024  # all the files read, decompressed
    ratio: int = 100  # decompressed / compressed size of one file
    # The ratio counts once a file has expanded past this: small files compress oddly well.
    ratio_grace_bytes: int = 1024 * 1024


@dataclass
class ParsedMessage:
    """One message, normalised: who said what, when, and the tool call it belongs to."""

    role: str  # one of ROLES
    content: str
    author: str = ""  # speaker name, model name or tool name as the source gives it
    timestamp: datetime | None = None  # timezone-aware when the source has one
    tool_name: str = ""  # set on a tool call (assistant) and on its result (tool)
    tool_call_id: str = ""  # links a tool call to its result
    client_id: str = ""  # the source's own stable id for this message, for idempotent re-import
    metadata: dict[str, Any] = field(default_factory=dict)
    # Our own exports only: the message's seq in the session it was exported from (memories
    # name their evidence by it), and the stored kind and pin, which the source decides.
    source_seq: int | None = None
    kind: str = ""
    pinned: bool = False


@dataclass
class ParsedSession:
    """One session read from a file: its messages in order and what the source says about it."""

    source_format: str
    messages: list[ParsedMessage] = field(default_factory=list)
    external_id: str = ""  # the source's own session id (idempotency key per project)
    title: str = ""
    agent_name: str = ""
    agent_persona: str = ""
    workflow: str = ""
    user_name: str = ""
    status: str = ""  # "" when the source does not say (a new session is then "completed")
    started_at: datetime | None = None
    ended_at: datetime | None = None
    topics: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    # Sections beyond the messages that our own exports carry (``memories``), by name, as
    # exported: ``sessions/portable/attachments.py`` hands each to the app that registered it.
    attachments: dict[str, Any] = field(default_factory=dict)
