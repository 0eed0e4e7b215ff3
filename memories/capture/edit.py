"""A person's edits of one memory: its wording and labels, and pinning.

An edit is what someone deliberately wrote, so it neither merges nor supersedes (that is
``record``'s job for new statements); changed content gets a new fingerprint and vector so
search and the restatement check see the new wording. Each change locks the row first, so
two people saving at once apply one after the other."""

from __future__ import annotations

from django.db import transaction

from memories.capture.record import (
    InvalidMemory,
    MemoryConflict,
    MemoryDraft,
    _embed,
    _tags,
    fingerprint,
    validate,
)
from memories.forget.decay import priority_of
from memories.models import Memory, MemoryStatus

EDITABLE = ("content", "topic", "tags", "confidence", "severity")


def _locked(memory: Memory) -> Memory:
    current = Memory.objects.select_for_update().get(pk=memory.pk)
    if current.status == MemoryStatus.DELETED:
        raise MemoryConflict(f"{current.public_id} was deleted.")
    return current


def edit(memory: Memory, **changes) -> Memory:
    """Apply ``changes`` (some of ``EDITABLE``); returns the saved memory."""
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise InvalidMemory(f"'{sorted(unknown)[0]}' cannot be edited.", sorted(unknown)[0])
    content = changes.get("content")
    if content is not None:
        # The checks a new memory's content gets (empty, too long), naming the field.
        validate(memory.project, MemoryDraft(type=memory.type, content=content))
        content = content.strip()
    # Embedded before the row is locked, so a slow model never holds the lock.
    vector = _embed(content) if content is not None and content != memory.content else None
    with transaction.atomic():
        current = _locked(memory)
        if content is not None and content != current.content:
            current.content = content
            current.fingerprint = fingerprint(content)
            current.embedding = vector if vector is not None else _embed(content)
        if "topic" in changes:
            current.topic = changes["topic"].strip()[:100]
        if "tags" in changes:
            current.tags = _tags(changes["tags"])
        for name in ("confidence", "severity"):
            if name in changes:
                setattr(current, name, changes[name].strip())
        current.priority = priority_of(current)
        current.save()
    return current


def set_pinned(memory: Memory, pinned: bool) -> Memory:
    """Pin (it never decays) or unpin; the priority follows at once."""
    with transaction.atomic():
        current = _locked(memory)
        current.pinned = pinned
        current.priority = priority_of(current)
        current.save(update_fields=["pinned", "priority", "updated_at"])
    return current
