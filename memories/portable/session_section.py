"""A session's memories as a section of its export (``sessions/portable/attachments.py``):
the memory document of ``export.py`` (decisions, findings, …, relationships), read back
by ``load.py`` into the imported session, with each evidence turn moved to the seq the
message has there."""

from __future__ import annotations

from typing import Any

from memories.models import Memory
from memories.portable.export import export_merged, to_yaml
from memories.portable.load import MemoryFileError, import_files
from sessions.models import Session
from sessions.portable.attachments import Section
from teams.access import Access

NAME = "memories"


def export_memories(session: Session, access: Access | None = None) -> dict[str, Any] | None:
    """The session's memories that ``access`` reads (None: all of them)."""
    memories = Memory.objects.filter(session=session)
    if access is not None:
        memories = access.scope(memories)
    document = export_merged(memories)
    return document or None


def _moved(entry: dict[str, Any], session: Session, seq_of: dict[int, int]) -> dict[str, Any]:
    entry = dict(entry)
    if "session" in entry:
        entry["session"] = session.public_id
    if "session_id" in entry:
        entry["session_id"] = session.public_id
    for key in ("turn_ref", "turn_refs"):
        value = entry.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            entry[key] = seq_of.get(value, value)
        elif isinstance(value, list):
            entry[key] = [seq_of.get(v, v) if isinstance(v, int) else v for v in value]
    return entry


def load_memories(session: Session, document: Any, seq_of: dict[int, int]) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise MemoryFileError("the memories section must be an object", file=NAME)
    moved = {
        key: [_moved(e, session, seq_of) if isinstance(e, dict) else e for e in value]
        if isinstance(value, list) and key != "memory_relationships"
        else value
        for key, value in document.items()
    }
    imported = import_files(session.project, {NAME: to_yaml(moved).encode()}, session=session)
    return {
        "created": len(imported.created),
        "unchanged": len(imported.unchanged),
        "renumbered": imported.renumbered,
    }


SECTION = Section(NAME, export_memories, load_memories)
