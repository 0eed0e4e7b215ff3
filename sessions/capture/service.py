"""Capture: turn a ``ParsedSession`` (from the REST API or an importer) into rows.

One transaction per call, so a session (or a whole imported file) is stored whole or not at
all. Idempotent by design:

- a session is found again by its external id (unique per project); sending it again
  appends only the messages it does not hold yet, and updates the fields sent again;
- a message is found again by its client id; without one, a re-sent *whole* session counts
  its messages by position (the first N are the N already stored);
- appends lock the session row, so concurrent appends get consecutive sequence numbers
  (the next one is kept on that row, ``Session.next_seq``);
- concurrent captures of one external id are serialised by an advisory lock on it, so the
  second finds the first's session instead of racing it.

Locks, in the order every writer takes them (see also ``sessions/enrich/pipeline.py``): the external
id's advisory lock, the session row ``FOR NO KEY UPDATE`` (it conflicts with other captures
of the session, not with the ``KEY SHARE`` that inserting a child row or the embedding worker
takes), then message rows. The only earlier message a capture updates is the one before the
first new message (its context vector gains its next message); no other writer waits on a
session while holding a message, so no cycle can form.

Before anything is written, NUL characters (which PostgreSQL cannot store) are removed and,
when the project asks for it, secrets and personal data are redacted: in the messages and
in the session's own text (``session_text.py``). Capture never waits on enrichment: the
work is enqueued after commit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.db import IntegrityError, connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from core.errors import DomainError
from sessions import derived, visibility
from sessions.capture.bulk_insert import insert_rows
from sessions.capture.keyword_context import index_context
from sessions.capture.message_kind import kind_of
from sessions.capture.quota import QuotaState, compaction_goal, quota_state, wants_compaction
from sessions.capture.redaction import RedactionPolicy
from sessions.capture.session_text import redact_session_text
from sessions.embedding.tokens import count_tokens
from sessions.forget.compaction import (
    READ_RECENTLY,
    SUMMARISE,
    Compaction,
    compact_session,
    has_compactable_messages,
)
from sessions.models import (
    API_SOURCE,
    Lifecycle,
    Message,
    Session,
    SessionStatus,
    new_public_id,
)
from sessions.visibility import Ownership
from teams.models import Project
from transcripts.base import ParsedMessage, ParsedSession
from transcripts.sanitize import clean_json, clean_text

logger = logging.getLogger(__name__)

NOTHING_TO_COMPACT = "every message in it is from the last 24 hours, pinned or already compacted"
TITLE_CHARS = 120


class CaptureError(DomainError, ValueError):
    """The payload cannot be stored as given (e.g. the session is in the trash)."""

    def __init__(self, message: str, *, status: int = 400):
        super().__init__(message)
        self.status = status


class QuotaExceeded(CaptureError):
    code = "MEM_E001"

    def __init__(
        self, *, session_bytes: int, quota_bytes: int, project: Project, label: str, why=""
    ):
        self.session_bytes = session_bytes
        self.quota_bytes = quota_bytes
        super().__init__(
            f"session {label} would hold {session_bytes:,} bytes of messages, over the "
            f"{quota_bytes:,}-byte quota of project {project}{why}; split it or ask an admin to "
            "raise the project's session quota",
            status=413,
        )

    def body(self) -> dict:
        return {
            **super().body(),
            "session_bytes": self.session_bytes,
            "quota_bytes": self.quota_bytes,
        }


class CompactionFailed(QuotaExceeded):
    """Compaction ran but could not make room (what is left is recent, pinned or small)."""

    code = "MEM_E006"


@dataclass
class CaptureResult:
    session: Session
    created: bool
    added: list[Message] = field(default_factory=list)
    duplicates: int = 0
    redactions: int = 0
    compaction: Compaction | None = None
    # Our own export's sections beside the messages (memories), as their loaders report.
    attachments: dict = field(default_factory=dict)

    @property
    def quota(self) -> QuotaState:
        freed = self.compaction.bytes_freed if self.compaction else 0
        return quota_state(self.session.project, self.session.size_bytes, bytes_freed=freed)


def capture_session(
    project: Project, parsed: ParsedSession, ownership: Ownership | None = None
) -> CaptureResult:
    """Create the session (or find it by external id) and store its new messages. A new
    session gets ``ownership`` (default: the team's, at the project's default visibility);
    one found again keeps its own."""
    ownership = ownership or visibility.for_capture(None, project)
    with transaction.atomic():
        _lock_external_ids(project, [parsed.external_id])
        result = _capture_in_transaction(project, parsed, ownership)
        _late([result])
    _after_commit([result])
    return result


def capture_sessions(
    project: Project,
    parsed_sessions: Iterable[ParsedSession],
    ownership: Ownership | None = None,
):
    """Several sessions (one imported file) in one transaction: all or nothing."""
    parsed_sessions = list(parsed_sessions)
    ownership = ownership or visibility.for_capture(None, project)
    with transaction.atomic():
        _lock_external_ids(project, [parsed.external_id for parsed in parsed_sessions])
        results = [
            _capture_in_transaction(project, parsed, ownership) for parsed in parsed_sessions
        ]
        _late(results)
    _after_commit(results)
    return results


def append_messages(
    session: Session | QuerySet[Session],
    messages: list[ParsedMessage],
    *,
    check: Callable[[Session], None] | None = None,
) -> CaptureResult:
    """Append to an existing session; retried messages with a client id are not duplicated.

    ``session`` may be the query that finds it (the API's: the caller's scope and the public
    id): the row is then read and locked by one statement (``Session.DoesNotExist`` when the
    query finds none), and ``check`` sees it before anything is written (a permission)."""
    if isinstance(session, Session):
        session = Session.objects.filter(pk=session.pk)
    with transaction.atomic():
        locked = (
            session.select_for_update(no_key=True, of=("self",)).select_related("project").get()
        )
        if check is not None:
            check(locked)
        if locked.deleted_at is not None:
            raise CaptureError(
                f"session {locked.public_id} is in the trash; restore it before appending",
                status=409,
            )
        result = CaptureResult(session=locked, created=False)
        _store_messages(result, messages, resend=False)
        _late([result])
    _after_commit([result])
    return result


# ---------------------------------------------------------------------------------------


def _lock_external_ids(project: Project, external_ids: list[str]) -> None:
    """Serialise captures of the same external ids until this transaction ends (sorted, so
    two imports of overlapping files take them in the same order)."""
    keys = sorted({f"{project.pk}:{external_id}" for external_id in external_ids if external_id})
    if keys:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(key, 0)) "
                "FROM unnest(%s::text[]) AS key ORDER BY key",
                [keys],
            )


def _capture_in_transaction(
    project: Project, parsed: ParsedSession, ownership: Ownership
) -> CaptureResult:
    session = None
    if parsed.external_id:
        session = (
            Session.objects.select_for_update(no_key=True)
            .filter(project=project, external_id=parsed.external_id)
            .first()
        )
    if session is not None:
        if session.deleted_at is not None:
            raise CaptureError(
                f"session {session.public_id} (external id {parsed.external_id!r}) is in the "
                "trash; restore it before capturing it again",
                status=409,
            )
        if not ownership.may_extend(session):
            raise CaptureError(
                f"external id {parsed.external_id!r} belongs to a session you cannot add to "
                "(another person's, not shared with the team); send another external id",
                status=409,
            )
        session.project = project  # already known: saves a query in _store_messages
        _update_fields(session, parsed)
        result = CaptureResult(session=session, created=False)
        _store_messages(result, parsed.messages, resend=True)
        return result
    session = _create_session(project, parsed, ownership)
    result = CaptureResult(session=session, created=True)
    _store_messages(result, parsed.messages, resend=False)
    return result


def _first_line(messages: list[ParsedMessage]) -> str:
    for message in messages:
        if message.role == "user" and message.content.strip():
            line = message.content.strip().splitlines()[0]
            return line[: TITLE_CHARS - 1] + "…" if len(line) > TITLE_CHARS else line
    return ""


def _session_fields(project: Project, parsed: ParsedSession) -> dict:
    timestamps = [m.timestamp for m in parsed.messages if m.timestamp is not None]
    started = parsed.started_at or (min(timestamps) if timestamps else None) or timezone.now()
    ended = parsed.ended_at or (max(timestamps) if timestamps else None)
    # Redacted whole, then cut to fit: a secret cut in two would no longer be recognised.
    text = {
        "agent_persona": clean_text(parsed.agent_persona)[0],
        "title": clean_text(parsed.title or _first_line(parsed.messages))[0],
        "user_name": clean_text(parsed.user_name)[0],
        "topics": [t.strip() for t in parsed.topics if t and t.strip()],
        "artifacts": [a.strip() for a in parsed.artifacts if a and a.strip()],
        "metadata": clean_json(parsed.metadata or {})[0],
    }
    redact_session_text(project, text)
    return {
        "agent_name": parsed.agent_name or "agent",
        "agent_persona": text["agent_persona"][:100],
        "workflow": parsed.workflow or "none",
        "title": text["title"][:300],
        "user_name": text["user_name"][:200],
        "source_format": parsed.source_format or API_SOURCE,
        "status": parsed.status or SessionStatus.COMPLETED,
        "started_at": started,
        "ended_at": ended,
        "topics": [t[:64] for t in text["topics"]],
        "artifacts": [a[:500] for a in text["artifacts"]],
        "metadata": text["metadata"],
    }


def _create_session(project: Project, parsed: ParsedSession, ownership: Ownership) -> Session:
    """Insert a new session (its external id is free: the caller holds its advisory lock)."""
    fields = _session_fields(project, parsed)
    for _attempt in range(5):
        session = Session(
            team_id=project.team_id,
            project=project,
            owner_id=ownership.owner_id,
            visibility=ownership.visibility,
            external_id=parsed.external_id,
            public_id=new_public_id(fields["agent_name"], fields["started_at"]),
            **fields,
        )
        try:
            with transaction.atomic():
                session.save(force_insert=True)
            return session
        except IntegrityError as exc:
            if "session_public_id_uniq" not in str(exc):
                raise
    raise CaptureError("could not allocate a unique session id; try again", status=503)


def _update_fields(session: Session, parsed: ParsedSession) -> None:
    """A re-sent session updates what it says again (status at exit, end time, …)."""
    fields = _session_fields(session.project, parsed)
    changed = []
    for name in ("agent_persona", "title", "user_name", "status"):
        if getattr(parsed, name) and fields[name] != getattr(session, name):
            setattr(session, name, fields[name])
            changed.append(name)
    if parsed.workflow and fields["workflow"] != session.workflow:
        session.workflow = fields["workflow"]
        changed.append("workflow")
    if fields["ended_at"] and (session.ended_at is None or fields["ended_at"] > session.ended_at):
        session.ended_at = fields["ended_at"]
        changed.append("ended_at")
    for name in ("topics", "artifacts"):
        merged = list(dict.fromkeys([*getattr(session, name), *fields[name]]))
        if merged != getattr(session, name):
            setattr(session, name, merged)
            changed.append(name)
    if fields["metadata"]:
        merged = {**session.metadata, **fields["metadata"]}
        if merged != session.metadata:
            session.metadata = merged
            changed.append("metadata")
    if changed:
        session.save(update_fields=[*changed, "updated_at"])


def _store_messages(result: CaptureResult, messages: list[ParsedMessage], *, resend: bool) -> None:
    session = result.session
    project = session.project
    # The row is locked (or was inserted) by this transaction, so its counter is current.
    next_seq = session.next_seq
    if not result.created and messages:
        # Positions are seqs: compaction leaves gaps where summarised turns were.
        stored_count = next_seq if resend else 0
        known_ids = _known_client_ids(
            # No ordering: the model's (by session) would join the sessions for nothing.
            Message.objects.filter(session=session).order_by(),
            {m.client_id for m in messages if m.client_id},
            compacted=session.message_count < next_seq,  # gaps in the seqs
        )
    else:
        stored_count, known_ids = 0, set()

    fresh: list[ParsedMessage] = []
    seen_ids: set[str] = set()
    for position, message in enumerate(messages):
        if message.client_id:
            if message.client_id in known_ids or message.client_id in seen_ids:
                result.duplicates += 1
                continue
            seen_ids.add(message.client_id)
        elif position < stored_count:
            result.duplicates += 1  # a re-sent whole session: already stored by position
            continue
        fresh.append(message)
    if not fresh:
        return

    rows = []
    redaction = RedactionPolicy.of(project)
    for message in fresh:
        content, nul_removed = clean_text(message.content)
        metadata, nul_in_metadata = clean_json(message.metadata or {})
        if redaction:
            content, hidden = redaction.text(content)
            metadata, hidden_in_metadata = redaction.json(metadata)
            result.redactions += hidden + hidden_in_metadata
            if hidden or hidden_in_metadata:
                metadata = {**metadata, "redactions": hidden + hidden_in_metadata}
        if nul_removed or nul_in_metadata:
            metadata = {**metadata, "nul_characters_removed": nul_removed + nul_in_metadata}
        rows.append(
            Message(
                team_id=session.team_id,
                session=session,
                seq=next_seq + len(rows),
                client_id=message.client_id[:255],
                role=message.role,
                author=clean_text(message.author)[0][:200],
                content=content,
                tool_name=message.tool_name[:200],
                tool_call_id=message.tool_call_id[:255],
                timestamp=message.timestamp,
                metadata=metadata,
                # An export read back says its kind; everything else is classified here.
                kind=message.kind or kind_of(message.role, content, message.tool_name, metadata),
                pinned=message.pinned,
            )
        )
    added_bytes = sum(len(row.content.encode()) for row in rows)
    _make_room(result, added_bytes)
    for row, tokens in zip(rows, count_tokens([row.content for row in rows]), strict=True):
        row.token_count = tokens
    result.added = insert_rows(rows)
    index_context(session.pk, next_seq)

    timestamps = [row.timestamp for row in rows if row.timestamp is not None]
    now = timezone.now()
    if session.lifecycle == Lifecycle.ARCHIVED:
        Message.objects.requeue_unembedded(
            session.pk
        )  # a new message restores an archived session in full
    # Nobody else writes the row before this transaction ends (it holds the row's lock, or
    # inserted it; compaction refreshed what it changed), so the new values are computed here
    # and the instance needs no refresh.
    updates = {
        "message_count": session.message_count + len(rows),
        "size_bytes": session.size_bytes + added_bytes,
        "next_seq": next_seq + len(rows),
        "updated_at": now,
        "enrichment_status": "pending",
        # A new message is activity: the lifecycle clock starts again (forget/archive.py).
        "last_active_at": now,
        "lifecycle": Lifecycle.ACTIVE,
        "archived_at": None,
    }
    if timestamps and (session.ended_at is None or max(timestamps) > session.ended_at):
        updates["ended_at"] = max(timestamps)
    Session.objects.filter(pk=session.pk).update(**updates)
    for name, value in updates.items():
        setattr(session, name, value)


def _known_client_ids(existing, wanted: set[str], *, compacted: bool) -> set[str]:
    """Which of ``wanted`` the session holds: as a message's client id or, in a
    ``compacted`` session, among those of the turns a summary replaced (it records them)."""
    if not wanted:
        return set()
    known = set(existing.filter(client_id__in=wanted).values_list("client_id", flat=True))
    if compacted and known != wanted:
        summaries = existing.filter(metadata__compaction__step=SUMMARISE)
        for client_ids in summaries.values_list("metadata__compaction__client_ids", flat=True):
            known.update(wanted.intersection(client_ids or ()))
    return known


def _make_room(result: CaptureResult, added_bytes: int) -> None:
    """Refuse (``QuotaExceeded``) what would take the session past its quota, after
    compacting it first when the project asks for that and the session has old messages."""
    session, project = result.session, result.session.project
    session_bytes = session.size_bytes + added_bytes
    why, refusal = "", QuotaExceeded
    if not result.created and wants_compaction(project, session_bytes):
        if has_compactable_messages(session):
            goal = compaction_goal(project, session_bytes)
            result.compaction = compact_session(session, goal_bytes=goal)
        else:
            result.compaction = Compaction(skipped=NOTHING_TO_COMPACT)
        session_bytes -= result.compaction.bytes_freed
        if result.compaction.skipped == READ_RECENTLY:
            why = f" (it is not compacted: {READ_RECENTLY})"
        elif result.compaction.skipped:
            why, refusal = (
                f" (compaction could free nothing: {result.compaction.skipped})",
                CompactionFailed,
            )
        else:
            freed = result.compaction.bytes_freed
            why, refusal = f" even after compaction freed {freed:,} bytes", CompactionFailed
    if session_bytes > project.session_quota_bytes:
        raise refusal(
            session_bytes=session_bytes,
            quota_bytes=project.session_quota_bytes,
            project=project,
            label=session.external_id or session.public_id,
            why=why,
        )


def _late(results: list[CaptureResult]) -> None:
    """New messages of sessions of past days (an import, a late capture): their days'
    diaries are distilled again (sessions/derived.py ``captured``)."""
    sessions = [result.session for result in results if result.added]
    if sessions:
        derived.captured(sessions)


def _after_commit(results: list[CaptureResult]) -> None:
    """Hand new work to the background pipeline once the rows are committed."""
    if any(result.added for result in results):
        from sessions.poke import poke_enrichment

        transaction.on_commit(poke_enrichment)
    for result in results:
        if result.added:
            logger.info(
                "captured %s: %d new message(s)%s%s",
                result.session.public_id,
                len(result.added),
                f", {result.duplicates} duplicate(s) skipped" if result.duplicates else "",
                f", {result.redactions} value(s) redacted" if result.redactions else "",
            )
