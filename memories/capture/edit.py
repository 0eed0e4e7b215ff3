"""Changing a recorded memory: an edit, pinning, a relationship removed. An edit locks the
row and checks its state first, so two people saving at once apply one after the other.
Deleting and restoring live in ``memories/forget/trash.py``.

An edit is what someone deliberately wrote, so it neither merges nor supersedes (that is
``record``'s job for new statements); changed content gets a new fingerprint and vector, so
search and the restatement check see the new wording. The text is redacted as the project's
messages are before anything is embedded or written."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from memories.capture.record import (
    InvalidMemory,
    MemoryConflict,
    MemoryDraft,
    _embed,
    _tags,
    fingerprint,
    validate,
)
from memories.decay import priority_of
from memories.models import LinkKind, Memory, MemoryLink, MemoryStatus
from sessions.capture.redaction import redact_for

# Columns an edit may set directly; the type's own fields go into ``details``.
EDITABLE_COLUMNS = (
    "content",
    "topic",
    "tags",
    "agent",
    "person",
    "confidence",
    "severity",
    "pinned",
    "shared",
)


# Free text, redacted as the project's messages are; the agent is a name memories are
# found by (see ``record.redact_draft``).
REDACTED_COLUMNS = frozenset({"content", "topic", "tags", "person"})


def _locked(memory: Memory) -> Memory:
    return Memory.objects.select_for_update().get(pk=memory.pk)


def edit(memory: Memory, columns: dict | None = None, details: dict | None = None, **changes):
    """Set ``columns`` (or keyword ``changes``, some of ``EDITABLE_COLUMNS``) and merge
    ``details`` (a key set to None is removed). The priority follows a change of pin,
    confidence…; returns the saved memory."""
    columns = {**(columns or {}), **changes}
    unknown = sorted(set(columns) - set(EDITABLE_COLUMNS))
    if unknown:
        raise InvalidMemory(f"'{unknown[0]}' cannot be edited.", unknown[0])
    for name in REDACTED_COLUMNS.intersection(columns):
        columns[name] = redact_for(memory.project, columns[name])[0]
    details = redact_for(memory.project, details)[0]
    embedding = None
    if "content" in columns:
        # The checks a new memory's content gets (empty, too long), naming the field.
        validate(memory.project, MemoryDraft(type=memory.type, content=columns["content"]))
        columns["content"] = columns["content"].strip()
        # Embedded before the row is locked, so a slow model never holds the lock.
        embedding = _embed(columns["content"])
    with transaction.atomic():
        current = _locked(memory)
        if current.status == MemoryStatus.DELETED:
            raise MemoryConflict(f"{current.public_id} is deleted; restore it before editing it.")
        for name, value in columns.items():
            if name == "content":
                current.fingerprint = fingerprint(value)
                current.embedding = embedding
            elif name == "tags":
                value = _tags(value)
            elif isinstance(value, str):
                value = value.strip()[:100] if name == "topic" else value.strip()
            setattr(current, name, value)
        merged = {**current.details, **(details or {})}
        current.details = {key: value for key, value in merged.items() if value is not None}
        current.priority = priority_of(current, timezone.now())
        current.save()
    return current


def set_pinned(memory: Memory, pinned: bool) -> Memory:
    """Pin (it never decays) or unpin; the priority follows at once."""
    return edit(memory, {"pinned": pinned})


def unlink(source: Memory, target: Memory, kind: str) -> bool:
    """Remove ``source kind target``; False when there was no such relationship. Removing
    the last ``supersedes`` of a superseded memory makes it active again."""
    with transaction.atomic():
        removed, _ = MemoryLink.objects.filter(source=source, target=target, kind=kind).delete()
        if removed and kind == LinkKind.SUPERSEDES:
            still = MemoryLink.objects.filter(target=target, kind=LinkKind.SUPERSEDES).exists()
            if not still:
                Memory.objects.filter(pk=target.pk, status=MemoryStatus.SUPERSEDED).update(
                    status=MemoryStatus.ACTIVE, updated_at=timezone.now()
                )
    return bool(removed)
