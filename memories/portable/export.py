"""A session's or project's memories as YAML files (``schema.py``), in a zip or one document.

Live memories only (proposed, active, rejected, superseded and reverted: history stays
history; deleted ones are gone), each with the history of its status, with the
relationships among them. ``turn_ref`` is the ``seq`` of the first message a
memory came from, in its session (``session``, by public id).
"""

from __future__ import annotations

import io
import zipfile
from collections import defaultdict
from datetime import UTC, datetime

import yaml
from django.db.models import F, Prefetch
from pydantic import ValidationError

from memories.models import Memory, MemoryEvent, MemoryEvidence, MemoryLink, MemoryType
from memories.portable.schema import (
    AGENT_STATE_SECTIONS,
    MODEL_OF_SECTION,
    SECTION_OF_TYPE,
    SECTIONS,
    AgentState,
    details_fields,
)

RELATIONSHIPS_FILE = "relationships.yaml"
AGENT_STATES_DIR = "agent-states"


def when(value: datetime | None) -> str | None:
    """ISO 8601 in UTC with a Z, as the files write times."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def export_files(memories) -> dict[str, dict]:
    """File name → YAML document (as data) for ``memories`` (a queryset)."""
    rows = list(
        memories.live()
        .select_related("session")
        .prefetch_related(
            Prefetch(
                "history",
                queryset=MemoryEvent.objects.select_related("by", "related").order_by("at", "id"),
            )
        )
        .order_by("type", "public_id")
    )
    turns = _turns([m.pk for m in rows])
    files: dict[str, dict] = {}
    states: dict[str, list[dict]] = defaultdict(list)
    for memory in rows:
        if memory.type == MemoryType.AGENT_STATE:
            states[memory.agent or "agent"].append(agent_state_entry(memory))
            continue
        section = SECTION_OF_TYPE[memory.type]
        files.setdefault(f"{section}.yaml", {section: []})[section].append(
            entry(memory, turns.get(memory.pk, []))
        )
    for agent, entries in states.items():
        for state in entries:
            name = agent if len(entries) == 1 else f"{agent}-{state['id']}"
            files[f"{AGENT_STATES_DIR}/{_safe(name)}.yaml"] = {"agent_state": state}
    ids = {m.pk: m.public_id for m in rows}
    links = MemoryLink.objects.filter(source_id__in=ids, target_id__in=ids).order_by("id")
    relationships = [
        {"source": ids[link.source_id], "target": ids[link.target_id], "relationship": link.kind}
        for link in links
    ]
    if relationships:
        files[RELATIONSHIPS_FILE] = {"memory_relationships": relationships}
    return files


def _turns(memory_ids: list[int]) -> dict[int, list[int]]:
    """Per memory, the seqs of its evidence messages in its own session, in order."""
    turns: dict[int, list[int]] = defaultdict(list)
    rows = (
        MemoryEvidence.objects.filter(memory_id__in=memory_ids, session_id=F("memory__session_id"))
        .order_by("memory_id", "message__seq")
        .values_list("memory_id", "message__seq")
    )
    for memory_id, seq in rows:
        turns[memory_id].append(seq)
    return turns


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".") or "agent"


def _tail(memory: Memory, fields: dict, extra: dict) -> dict:
    """Tags, the fields beyond the type's shape (when not their default), decay."""
    fields["tags"] = list(memory.tags)
    if memory.confidence:
        fields["confidence"] = memory.confidence
    if memory.topic and "topic" not in fields:
        fields["topic"] = memory.topic
    if memory.scope != "project":
        fields["scope"] = memory.scope
    if memory.pinned:
        fields["pinned"] = True
    if memory.status != "active":
        fields["status"] = memory.status
    history = [
        {
            "at": when(event.at),
            "from_status": event.from_status,
            "to_status": event.to_status,
            "by": event.who,
            **({"reason": event.reason} if event.reason else {}),
            **({"related": event.related.public_id} if event.related_id else {}),
        }
        for event in memory.history.all()
    ]
    # A memory recorded active and never changed has no history worth a line in the file.
    if history and [(h["from_status"], h["to_status"]) for h in history] != [("", "active")]:
        fields["history"] = history
    if memory.person:
        fields["person"] = memory.person
    if memory.shared:
        fields["shared"] = True
    if extra:
        fields["extra"] = extra
    fields["decay"] = {
        "priority": round(memory.priority, 6),
        "base_priority": round(memory.base_priority, 6),
        "last_accessed": when(memory.last_accessed_at),
        "access_count": memory.access_count,
    }
    return fields


def entry(memory: Memory, turns: list[int]) -> dict:
    """One decision, finding, preference, learning or fact in its file's shape."""
    section = SECTION_OF_TYPE[memory.type]
    _, statement, agent_field = SECTIONS[section]
    own = details_fields(section)
    fields: dict = {"id": memory.public_id}
    fields["timestamp"] = when(memory.occurred_at)
    if turns:
        fields["turn_ref"] = turns[0]
        if len(turns) > 1:
            fields["turn_refs"] = turns
    if memory.session_id:
        fields["session"] = memory.session.public_id
    if memory.agent:
        fields[agent_field] = memory.agent
    details = dict(memory.details or {})
    if memory.type == MemoryType.FINDING:
        fields["severity"] = memory.severity
        resolution = details.pop("resolution", None)
        resolution = dict(resolution) if isinstance(resolution, dict) else {}
        fields["resolution"] = {**resolution, "status": memory.resolution or "open"}
    if memory.type == MemoryType.PREFERENCE:
        fields["topic"] = memory.topic
    fields[statement] = memory.content
    extra = {key: value for key, value in details.items() if key not in own}
    fields.update({key: value for key, value in details.items() if key in own})
    fields = _tail(memory, fields, extra)
    return _fit(MODEL_OF_SECTION[section], fields, own)


def agent_state_entry(memory: Memory) -> dict:
    details = dict(memory.details or {})
    fields = {"agent_id": memory.agent, "id": memory.public_id}
    fields["session_id"] = memory.session.public_id if memory.session_id else ""
    fields["last_updated"] = when(memory.last_accessed_at or memory.occurred_at)
    if memory.last_accessed_at:
        fields["timestamp"] = when(memory.occurred_at)
    own = set(AGENT_STATE_SECTIONS)
    extra = {key: value for key, value in details.items() if key not in own}
    fields.update({key: value for key, value in details.items() if key in own})
    return _fit(AgentState, _tail(memory, fields, extra), own)


def _fit(model, fields: dict, own: set[str]) -> dict:
    """Move a type field whose stored value does not fit the file's shape (a ``reversible``
    of "maybe") into ``extra``, so every export imports back."""
    for _ in range(len(own) + 1):
        try:
            model.model_validate(fields)
            return fields
        except ValidationError as exc:
            wrong = {str(error["loc"][0]) for error in exc.errors() if error["loc"]} & own
            if not wrong:
                return fields
            for name in wrong:
                fields.setdefault("extra", {})[name] = fields.pop(name)
    return fields


def to_yaml(document: dict) -> str:
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)


def export_zip(memories) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, document in export_files(memories).items():
            archive.writestr(name, to_yaml(document))
    return buffer.getvalue()


def export_merged(memories) -> dict:
    """Everything as one document (data), a section per kind (agent states as a list)."""
    merged: dict = {}
    for document in export_files(memories).values():
        if "agent_state" in document:
            merged.setdefault("agent_states", []).append(document["agent_state"])
        else:
            merged.update(document)
    return merged


def export_document(memories) -> str:
    """Everything in one YAML document, a section per kind (agent states as a list)."""
    return to_yaml(export_merged(memories))
