"""Memories a transcript already states, read before any extractor guesses.

An imported ``conversation.md`` annotates turns with what its memory system stored and used::

    **Memory-Refs:** [FIND-001, FIND-002]
    ...
    **Memory Stored:**
    - Finding: Missing MFA requirement [FIND-001]

The importer keeps both in the message's metadata (``memory_stored``: the list items as
text, ``memory_refs``: the ids); an agent capturing messages through the API may send
``memory_stored`` items as objects ``{"type", "ref", "text"}`` instead. Each stored item
becomes a draft (origin import, the message as evidence, the ref kept as its id when the
project has no memory of that id yet). A ref to a memory stored earlier adds the referring
message as evidence (a restatement: ``record`` merges it and counts an access).

A session imported from a BMAD folder brings its memory files too (``session_files.py``):
they come first, and a stored item or ref naming one of their ids adds its turn as evidence
of that memory instead of making another.
"""

from __future__ import annotations

import re
from typing import Any

from memories.capture.record import Evidence, MemoryDraft, add_evidence
from memories.enrich.session_files import import_session_files
from memories.models import ID_PREFIX, TYPE_OF_PREFIX, Memory, MemoryType, Origin
from sessions.models import Message, Session

_REF = re.compile(r"\[\s*([A-Z]+-\d+)\s*\]\s*$")
_LABEL = re.compile(r"^\s*([A-Za-z]+(?:[ _][a-z]+)?)\s*:\s*")
_SEVERITY = re.compile(r"\*\*(CRITICAL|IMPORTANT|MINOR|HIGH|MEDIUM|LOW)\b", re.IGNORECASE)
_TYPE_WORDS = {
    "decision": MemoryType.DECISION,
    "finding": MemoryType.FINDING,
    "preference": MemoryType.PREFERENCE,
    "learning": MemoryType.LEARNING,
    "fact": MemoryType.FACT,
}


def stated_item(item: Any) -> dict[str, str] | None:
    """``{"type", "ref", "text"}`` of one ``memory_stored`` item, or None when its type
    cannot be told (no DEC-/FIND-/... ref and no "Decision:"-like label)."""
    if isinstance(item, dict):
        text = str(item.get("text") or item.get("content") or "").strip()
        ref = str(item.get("ref") or item.get("id") or "").strip()
        kind = str(item.get("type") or "").strip().lower()
    elif isinstance(item, str):
        text, ref, kind = item.strip(), "", ""
        if found := _REF.search(text):
            ref, text = found.group(1), text[: found.start()].rstrip()
        if label := _LABEL.match(text):
            word = label.group(1).lower().replace(" ", "_")
            if word in _TYPE_WORDS:
                kind, text = word, text[label.end() :]
    else:
        return None
    kind = _TYPE_WORDS.get(kind, kind) or TYPE_OF_PREFIX.get(ref.partition("-")[0], "")
    if not kind and text:
        kind = _TYPE_WORDS.get(text.split(maxsplit=1)[0].lower(), "")
    # an agent's state is a structure, not a note: it comes from files or the API
    if kind not in _TYPE_WORDS.values() or not text:
        return None
    return {"type": kind, "ref": ref, "text": text}


def stated_drafts(session: Session, messages: list[Message]) -> list[MemoryDraft]:
    """Drafts of what ``messages`` say they stored, in order, then the references."""
    from_files = import_session_files(session, messages)
    drafts: list[MemoryDraft] = []
    by_ref: dict[str, MemoryDraft] = {}
    referring: list[tuple[Message, str]] = []
    for message in messages:
        metadata = message.metadata if isinstance(message.metadata, dict) else {}
        stored = metadata.get("memory_stored")
        for item in stored if isinstance(stored, list) else []:
            parsed = stated_item(item)
            if parsed is None:
                continue
            if (memory := from_files.get(parsed["ref"])) is not None:
                # the folder's files say it in full: this turn is its evidence
                add_evidence(memory, [Evidence(message, _quote(message, parsed["ref"]))])
                continue
            draft = _draft(session, message, parsed)
            drafts.append(draft)
            if parsed["ref"]:
                by_ref.setdefault(parsed["ref"], draft)
        refs = metadata.get("memory_refs")
        for ref in refs if isinstance(refs, list) else []:
            if isinstance(ref, str) and ref.strip():
                referring.append((message, ref.strip()))
    earlier = _earlier(session, {ref for _, ref in referring} - by_ref.keys() - from_files.keys())
    for message, ref in referring:
        if (memory := from_files.get(ref)) is not None:
            add_evidence(memory, [Evidence(message, _quote(message, ref))])
        elif (draft := by_ref.get(ref)) is not None:
            if all(e.message.pk != message.pk for e in draft.evidence):
                draft.evidence.append(Evidence(message, _quote(message, ref)))
        elif (memory := earlier.get(ref)) is not None:
            drafts.append(_restatement(session, message, memory, ref))
    return drafts


def _draft(session: Session, message: Message, item: dict[str, str]) -> MemoryDraft:
    quote = _quote(message, item["ref"]) if item["ref"] else ""
    severity = ""
    if item["type"] == MemoryType.FINDING and (level := _SEVERITY.search(quote)):
        severity = level.group(1).lower()
    return MemoryDraft(
        type=item["type"],
        content=item["text"],
        session=session,
        agent=message.author if message.role == "assistant" else "",
        severity=severity,
        origin=Origin.IMPORT,
        occurred_at=message.timestamp,
        evidence=[Evidence(message, quote)],
        # kept only when it reads as this type's id (a decision is not kept as FIND-003)
        public_id=item["ref"] if item["ref"].startswith(f"{ID_PREFIX[item['type']]}-") else "",
    )


def _quote(message: Message, ref: str) -> str:
    """The line of the message that names ``ref`` ("1. **CRITICAL:** No MFA … [FIND-001]")."""
    for line in (message.content or "").splitlines():
        if f"[{ref}" in line or f" {ref}]" in line or f", {ref}" in line:
            return line.strip()
    return ""


def _earlier(session: Session, refs: set[str]) -> dict[str, Memory]:
    """Memories of this session read in an earlier run, by the ref they were stored under."""
    if not refs:
        return {}
    rows = Memory.objects.active().filter(
        project_id=session.project_id, session=session, public_id__in=refs
    )
    return {m.public_id: m for m in rows}


def _restatement(session: Session, message: Message, memory: Memory, ref: str) -> MemoryDraft:
    return MemoryDraft(
        type=memory.type,
        content=memory.content,
        session=session,
        topic=memory.topic,
        origin=Origin.IMPORT,
        evidence=[Evidence(message, _quote(message, ref))],
    )
