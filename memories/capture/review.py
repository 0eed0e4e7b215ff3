"""Reviewing memories: what waits for a person, what they accept, reject or revert, and the
history of every change of status.

- **Proposed or active.** A memory the extractor finds with a confidence below its
  project's ``memory_review_threshold`` is recorded ``proposed``: kept, listed in the review
  queue, but not used (lists, search, context and MCP read active memories unless asked).
  Memories recorded on purpose (a person, an agent, an import of stated memories) are active
  at once. ``confidence_score`` turns the confidence labels into numbers.
- **Accept** (optionally with edited content) makes a proposal active; only then does it
  supersede the active memories it contradicts (a doubtful proposal never retires an
  accepted memory). Accepting a superseded memory is a conflict naming the newer one.
- **Reject** keeps the memory as a rejection (who, when, why): a later extraction or
  import of the same statement (the same words, or nearly the same meaning with the same
  polarity, ``rejection_of``) is not proposed again. ``unreject`` puts it back in the queue.
- **Confirm** clears a memory's may-be-stale flag (``memories/enrich/staleness.py``).
- **Revert** withdraws an active memory (a decision undone), with who and why; **reopen**
  opens a resolved finding again.
- **History**: each change is a ``MemoryEvent`` (``note``), shown on the memory's page, in
  the API and in exports.

Every change locks the row and reads it again, so two reviewers acting at once apply one
after the other (the second gets the state the first left).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from memories.capture.edit import edit
from memories.capture.record import (
    InvalidMemory,
    MemoryConflict,
    MemoryDraft,
    activate,
    validate,
)
from memories.capture.status import MAX_REASON_CHARS, note
from memories.decay import priority_of
from memories.models import (
    LinkKind,
    Memory,
    MemoryLink,
    MemoryStatus,
    MemoryType,
    Resolution,
)
from sessions.capture.redaction import redact_for


def superseded_by(memory: Memory) -> Memory | None:
    link = (
        MemoryLink.objects.filter(target=memory, kind=LinkKind.SUPERSEDES)
        .select_related("source")
        .order_by("-id")
        .first()
    )
    return link.source if link else None


def _locked(memory: Memory) -> Memory:
    return (
        Memory.objects.select_for_update(of=("self",)).select_related("project").get(pk=memory.pk)
    )


def _refuse_deleted(memory: Memory) -> None:
    if memory.status == MemoryStatus.DELETED:
        raise MemoryConflict(
            f"{memory.public_id} is deleted; restore it from the trash first.", state="deleted"
        )


def _set_status(memory: Memory, status: str) -> None:
    memory.status = status
    memory.priority = priority_of(memory, timezone.now())
    memory.save(update_fields=["status", "priority", "updated_at"])


def accept(memory: Memory, *, by=None, reason: str = "", content: str | None = None) -> Memory:
    """Make a proposal (or a rejected or reverted memory) active, with ``content`` edited
    first when given; it then supersedes the active memories it contradicts. Accepting an
    active memory changes nothing. 409 when it is superseded (naming the newer memory) or
    deleted; 400 naming ``content`` when the edit is empty or too long."""
    if content is not None:
        content = redact_for(memory.project, content)[0]
        validate(memory.project, MemoryDraft(type=memory.type, content=content))
        content = content.strip()
    with transaction.atomic():
        current = _locked(memory)
        _refuse_deleted(current)
        if current.status == MemoryStatus.SUPERSEDED:
            newer = superseded_by(current)
            named = newer.public_id if newer else "a newer memory"
            raise MemoryConflict(
                f"{current.public_id} was superseded by {named}; accept or edit {named} instead.",
                state="superseded",
                superseded_by=newer.public_id if newer else None,
            )
        if content is not None and content != current.content:
            current = edit(current, {"content": content})
            reason = reason or "edited, then accepted"
        if current.status == MemoryStatus.ACTIVE:
            return current
        activate(current, by=by, reason=reason or "accepted")
    return current


def reject(memory: Memory, *, by=None, reason: str = "") -> Memory:
    """Keep ``memory`` as a rejection: not used, and its statement not proposed again.
    Rejecting a rejection changes nothing; 409 when it is deleted."""
    with transaction.atomic():
        current = _locked(memory)
        _refuse_deleted(current)
        if current.status == MemoryStatus.REJECTED:
            return current
        before = current.status
        _set_status(current, MemoryStatus.REJECTED)
        note(current, before, MemoryStatus.REJECTED, by=by, reason=reason or "rejected")
    return current


def unreject(memory: Memory, *, by=None, reason: str = "") -> Memory:
    """Undo a rejection: the memory is proposed again (back in the queue). 409 when it is
    not a rejection."""
    with transaction.atomic():
        current = _locked(memory)
        if current.status != MemoryStatus.REJECTED:
            raise MemoryConflict(
                f"{current.public_id} is not rejected (it is {current.status}).",
                state=str(current.status),
            )
        _set_status(current, MemoryStatus.PROPOSED)
        note(
            current,
            MemoryStatus.REJECTED,
            MemoryStatus.PROPOSED,
            by=by,
            reason=reason or "rejection undone",
        )
    return current


def revert(memory: Memory, *, by=None, reason: str) -> Memory:
    """Withdraw an active memory (a decision undone) with why; it stays as history. 400
    naming ``reason`` without one; 409 unless it is active."""
    reason = (reason or "").strip()
    if not reason:
        raise InvalidMemory("Say why it is reverted.", "reason")
    if len(reason) > MAX_REASON_CHARS:
        raise InvalidMemory(f"A reason holds at most {MAX_REASON_CHARS} characters.", "reason")
    with transaction.atomic():
        current = _locked(memory)
        _refuse_deleted(current)
        if current.status != MemoryStatus.ACTIVE:
            raise MemoryConflict(
                f"Only an active memory is reverted; {current.public_id} is {current.status}.",
                state=str(current.status),
            )
        _set_status(current, MemoryStatus.REVERTED)
        note(current, MemoryStatus.ACTIVE, MemoryStatus.REVERTED, by=by, reason=reason)
    return current


def reopen(finding: Memory, *, by=None, reason: str = "") -> Memory:
    """Open a resolved finding again (its resolution's details are kept under
    ``details.resolution`` with status open). 400 naming ``type`` for another type; 409
    when it is open."""
    with transaction.atomic():
        current = _locked(finding)
        if current.type != MemoryType.FINDING:
            raise InvalidMemory("Only findings are reopened.", "type")
        _refuse_deleted(current)
        if current.resolution != Resolution.RESOLVED:
            raise MemoryConflict(f"{current.public_id} is open already.", state="open")
        details = dict(current.details)
        details["resolution"] = {**(details.get("resolution") or {}), "status": "open"}
        current.details = details
        current.resolution = Resolution.OPEN
        current.priority = priority_of(current, timezone.now())
        current.save(update_fields=["details", "resolution", "priority", "updated_at"])
        note(current, Resolution.RESOLVED, Resolution.OPEN, by=by, reason=reason or "reopened")
    return current


def confirm(memory: Memory, *, by=None, reason: str = "") -> Memory:
    """Someone checked a memory flagged may be stale: it still holds; the flag clears. 409
    when it is not flagged."""
    with transaction.atomic():
        current = _locked(memory)
        _refuse_deleted(current)
        if current.stale_since is None:
            raise MemoryConflict(f"{current.public_id} is not flagged as may be stale.")
        current.stale_since = None
        current.stale_session = None
        current.save(update_fields=["stale_since", "stale_session", "updated_at"])
        note(current, "stale", current.status, by=by, reason=reason or "confirmed: still true")
    return current


def pending_count(memories, at_most: int | None = None) -> int:
    """How many of ``memories`` (a scoped queryset) wait for review; with ``at_most``, no
    more than that is counted (reading at most that many ids: every page's menu shows it,
    and must not count a whole table)."""
    waiting = memories.filter(status=MemoryStatus.PROPOSED)
    if at_most is None:
        return waiting.count()
    return len(waiting.values_list("pk", flat=True)[:at_most])
