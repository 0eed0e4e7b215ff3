"""Memory files (``schema.py``) into a project, and optionally one of its sessions.

Everything is checked before anything is written: the YAML, every entry's fields (an
unknown one is refused, naming file, entry and field), ids given twice, the turns named,
the relationships' ends. Then one transaction writes it all, so a refusal leaves nothing
half-written. A file's id is kept when the project has no memory of that id (later numbers
follow it), else the memory gets the next free one (``renumbered``). Importing the same
files again changes nothing: an entry whose id already names the same statement is kept.
Imported memories have origin "import"; ``turn_ref`` names the evidence message by its
``seq`` in the session (the one asked for, else the entry's own when the project has it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml
from django.db import connection, transaction
from django.db.models import Q
from pydantic import ValidationError

from memories.capture.record import (
    Evidence,
    InvalidMemory,
    MemoryConflict,
    MemoryDraft,
    agent_state_text,
    fingerprint,
    link,
    record,
    redact_draft,
)
from memories.decay import priority_of
from memories.models import (
    Memory,
    MemoryEvent,
    MemoryScope,
    MemoryStatus,
    MemoryType,
    Origin,
)
from memories.portable.schema import (
    AGENT_STATE_SECTIONS,
    SECTIONS,
    AgentState,
    MemoryFile,
    Relationship,
    Said,
    details_fields,
)
from sessions.capture.redaction import redact_for
from sessions.models import Message, Session
from sessions.visibility import Ownership
from teams.models import Project
from transcripts._yaml import TextTimesLoader as _Loader
from transcripts.base import ImportFormatError, UnzipLimits
from transcripts.formats.anthropic_session import unzip

# One import is one transaction: a bound keeps it from holding locks for minutes.
MAX_MEMORIES = 5000
YAML_SUFFIXES = (".yaml", ".yml")
IMPORT_LOCK_SPACE = 0x6D6966  # "mif"


class MemoryFileError(ImportFormatError):
    """A memory file refused: ``file``, ``entry`` ("decisions[2] (DEC-003)") and ``field``
    say where."""

    def __init__(self, message: str, *, file: str, entry: str | None = None, **where):
        self.file = file
        self.entry = entry
        super().__init__(message, **where)

    def __str__(self) -> str:
        where = ", ".join(part for part in (self.file, self.entry) if part)
        return f"{where}: {super().__str__()}" if where else super().__str__()

    def body(self) -> dict[str, Any]:
        return {**super().body(), "file": self.file, "entry": self.entry}


@dataclass
class Item:
    """One memory to write, and where it was read."""

    file: str
    entry: str
    section: str
    fields: Said | AgentState
    session: Session | None = None
    messages: list[Message] = field(default_factory=list)


@dataclass
class Imported:
    created: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    renumbered: dict[str, str] = field(default_factory=dict)
    relationships: int = 0
    memories: dict[str, Memory] = field(default_factory=dict, repr=False)  # by the files' ids


def read_upload(name: str, data: bytes, limits: UnzipLimits) -> dict[str, bytes]:
    """An uploaded file as memory files: a zip's YAML files, or the file itself."""
    if data[:4] == b"PK\x03\x04":
        files = unzip(data, limits, wanted=lambda path: path.lower().endswith(YAML_SUFFIXES))
        if not files:
            raise MemoryFileError("the zip archive holds no .yaml file", file=name)
        return {f"{name}:{path}" if name else path: body for path, body in files.items()}
    return {name or "body": data}


def parse(name: str, data: bytes) -> MemoryFile:
    try:
        document = yaml.load(data, Loader=_Loader)  # a SafeLoader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        line = mark.line + 1 if mark is not None else None
        raise MemoryFileError(f"not valid YAML: {problem}", file=name, line=line) from None
    if not isinstance(document, dict):
        raise MemoryFileError(
            "expected a mapping with sections such as 'decisions:' or 'findings:'", file=name
        )
    try:
        return MemoryFile.model_validate(document)
    except ValidationError as exc:
        raise _located(name, document, exc.errors()[0]) from None


def _located(name: str, document: dict, error: dict) -> MemoryFileError:
    loc = list(error["loc"])
    section = str(loc.pop(0)) if loc else ""
    entry = section
    if loc and isinstance(loc[0], int):
        index = loc.pop(0)
        raw = document.get(section)
        raw_id = (
            raw[index].get("id") if isinstance(raw, list) and isinstance(raw[index], dict) else ""
        )
        entry = f"{section}[{index}]" + (f" ({raw_id})" if raw_id else "")
    if error["type"] == "extra_forbidden" and not loc:
        known = ", ".join(MemoryFile.model_fields)
        return MemoryFileError(
            f"unknown section; a memory file holds {known}", file=name, field=section
        )
    message = "unknown field" if error["type"] == "extra_forbidden" else error["msg"]
    return MemoryFileError(message, file=name, entry=entry, field=".".join(map(str, loc)) or None)


def import_files(
    project: Project,
    files: dict[str, bytes],
    *,
    session: Session | None = None,
    by=None,
    by_turn: bool = False,
    ownership: Ownership | None = None,
) -> Imported:
    """Import ``files`` (name → YAML bytes) into ``project`` (and ``session``): all or none.
    Each memory gets ``ownership`` (default: as any memory recorded, its session's or the
    project's: ``memories.visibility``)."""
    items, relationships = _items(files)
    if len(items) > MAX_MEMORIES:
        raise MemoryFileError(
            f"{len(items)} memories in one import; at most {MAX_MEMORIES}: split the files",
            file=next(iter(files)),
        )
    _check_ids(items)
    _place(project, items, session, by_turn)
    from sessions.embedding.backend import embed

    vectors = embed([_content(item) for item in items])
    result = Imported()
    with transaction.atomic():
        # Two imports into one project take turns: the second sees what the first wrote, so
        # the same files sent twice at once are still written once.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [IMPORT_LOCK_SPACE, project.pk])
        by_id: dict[str, Memory] = {}
        for item, vector in zip(items, vectors, strict=True):
            memory = _write(project, item, vector, by, result, ownership)
            if item.fields.id:
                by_id[item.fields.id] = memory
        result.memories = by_id
        for file, entry, relationship in relationships:
            _relate(project, by_id, file, entry, relationship)
            result.relationships += 1
    return result


def _items(files: dict[str, bytes]) -> tuple[list[Item], list[tuple[str, str, Relationship]]]:
    items: list[Item] = []
    relationships = []
    for name, data in files.items():
        document = parse(name, data)
        for section in SECTIONS:
            for index, entry in enumerate(getattr(document, section)):
                items.append(Item(name, _label(section, index, entry.id), section, entry))
        states = [document.agent_state] if document.agent_state else []
        label = "agent_state" if states else "agent_states"
        for index, state in enumerate([*states, *document.agent_states]):
            entry = (
                label
                if states and index == 0
                else _label("agent_states", index - len(states), state.id)
            )
            items.append(Item(name, entry, "agent_states", state))
        for index, relationship in enumerate(document.memory_relationships):
            relationships.append((name, f"memory_relationships[{index}]", relationship))
    return items, relationships


def _label(section: str, index: int, memory_id: str) -> str:
    return f"{section}[{index}]" + (f" ({memory_id})" if memory_id else "")


def _check_ids(items: list[Item]) -> None:
    seen: dict[str, Item] = {}
    for item in items:
        if not item.fields.id:
            continue
        if item.fields.id in seen:
            first = seen[item.fields.id]
            raise MemoryFileError(
                f"id {item.fields.id} is given twice (also {first.file}, {first.entry})",
                file=item.file,
                entry=item.entry,
                field="id",
            )
        seen[item.fields.id] = item


def _place(project: Project, items: list[Item], session: Session | None, by_turn: bool) -> None:
    """Each item's session (the one asked for, else its own when the project has it) and
    its evidence messages (``turn_ref``, ``turn_refs``: a message's seq, or with
    ``by_turn`` the turn number of a conversation.md) in that session."""
    refs = set()
    for item in items:
        refs.add(
            item.fields.session_id if isinstance(item.fields, AgentState) else item.fields.session
        )
    refs.discard("")
    sessions = {}
    if session is None and refs:
        named = Q(public_id__in=refs) | Q(external_id__in=refs)
        for found in Session.objects.alive().filter(named, project=project):
            sessions[found.public_id] = found
            if found.external_id:
                sessions.setdefault(found.external_id, found)
    for item in items:
        own = item.fields.session_id if isinstance(item.fields, AgentState) else item.fields.session
        item.session = session or sessions.get(own)
        if item.session is None or isinstance(item.fields, AgentState):
            continue
        seqs = list(dict.fromkeys([*_given(item.fields.turn_ref), *item.fields.turn_refs]))
        if by_turn:
            # "## Turn 8" of an imported conversation.md; a turn it does not have (a
            # transcript kept in part) leaves the memory without that evidence
            names = {f"turn-{n}": n for n in seqs}
            messages = Message.objects.of_session(item.session).filter(client_id__in=names)
            found = {names[m.client_id]: m for m in messages}
            item.messages = [found[n] for n in seqs if n in found]
            continue
        found = {m.seq: m for m in Message.objects.of_session(item.session).filter(seq__in=seqs)}
        for seq in seqs:
            if seq not in found:
                raise MemoryFileError(
                    f"session {item.session.public_id} has no message {seq}",
                    file=item.file,
                    entry=item.entry,
                    field="turn_ref" if seq == item.fields.turn_ref else "turn_refs",
                )
        item.messages = [found[seq] for seq in seqs]


def _given(value: int | None) -> list[int]:
    return [] if value is None else [value]


def _content(item: Item) -> str:
    if isinstance(item.fields, AgentState):
        return agent_state_text(item.fields.agent_id, _state(item.fields))
    return getattr(item.fields, SECTIONS[item.section][1]).strip()


def _state(fields: AgentState) -> dict:
    data = fields.model_dump(mode="json", include=set(AGENT_STATE_SECTIONS), exclude_unset=True)
    return {**fields.extra, **data}


def _draft(item: Item, vector, by) -> MemoryDraft:
    fields = item.fields
    scope = fields.scope
    if scope == MemoryScope.SESSION and item.session is None:
        scope = MemoryScope.PROJECT  # its session is not in this project
    common = {
        "content": _content(item),
        "session": item.session,
        "tags": fields.tags,
        "confidence": fields.confidence,
        "scope": scope,
        "origin": Origin.IMPORT,
        "created_by": by,
        "pinned": fields.pinned,
        # no person in the file: its session's, as for any memory recorded
        "person": fields.person,
        "shared": fields.shared,
        "base_priority": fields.decay.base_priority,
        "embedding": vector,
        "public_id": fields.id,
        "reconcile": False,  # the files say what is what: no merging, no superseding
    }
    if isinstance(fields, AgentState):
        return MemoryDraft(
            type=MemoryType.AGENT_STATE,
            details=_state(fields),
            agent=fields.agent_id,
            topic=fields.topic or f"agent:{fields.agent_id}",
            occurred_at=fields.timestamp or fields.last_updated,
            **common,
        )
    kind, _, agent_field = SECTIONS[item.section]
    details = {
        **fields.extra,
        **fields.model_dump(mode="json", include=details_fields(item.section), exclude_unset=True),
    }
    resolution = ""
    if kind == MemoryType.FINDING and fields.resolution is not None:
        resolution = fields.resolution.status
        stated = fields.resolution.model_dump(mode="json", exclude_unset=True)
        if set(stated) - {"status"}:
            details["resolution"] = {**stated, "status": resolution}
    return MemoryDraft(
        type=kind,
        details=details,
        agent=getattr(fields, agent_field),
        topic=fields.topic,
        severity=getattr(fields, "severity", ""),
        resolution=resolution,
        occurred_at=fields.timestamp,
        evidence=[Evidence(message) for message in item.messages],
        **common,
    )


def _write(
    project: Project, item: Item, vector, by, result: Imported, ownership: Ownership | None
) -> Memory:
    draft = _draft(item, vector, by)
    if ownership is not None:
        draft.owner_id, draft.visibility = ownership.owner_id, ownership.visibility
    # Redacted before the comparison: what is stored is the redacted wording.
    redact_draft(project, draft)
    # Already there: the same statement under the file's id (or, without an id, of the
    # same type in the same session)
    same = (
        Memory.objects.live()
        .filter(project=project, type=draft.type, fingerprint=fingerprint(draft.content))
        .filter(
            **({"public_id": draft.public_id} if draft.public_id else {"session": draft.session})
        )
        .first()
    )
    if same is not None:
        result.unchanged.append(same.public_id)
        return same
    try:
        recorded = record(project, draft)
    except InvalidMemory as exc:
        raise MemoryFileError(str(exc), file=item.file, entry=item.entry, field=exc.field) from None
    memory = recorded.memory
    if recorded.outcome == "rejected":
        # The project rejected this statement: it stays a rejection.
        result.unchanged.append(memory.public_id)
        return memory
    decay = item.fields.decay
    memory.access_count = decay.access_count
    memory.last_accessed_at = decay.last_accessed
    if item.fields.status != MemoryStatus.ACTIVE:
        memory.status = item.fields.status
    if item.fields.history:
        # The file's history replaces the line the import itself wrote.
        memory.history.all().delete()
        MemoryEvent.objects.bulk_create(
            MemoryEvent(
                team_id=memory.team_id,
                memory=memory,
                from_status=entry.from_status,
                to_status=entry.to_status,
                actor=entry.by[:64],
                reason=redact_for(project, entry.reason)[0][:500],
                at=entry.at,
            )
            for entry in item.fields.history
        )
    memory.priority = decay.priority if decay.priority is not None else priority_of(memory)
    memory.save(update_fields=["access_count", "last_accessed_at", "status", "priority"])
    result.created.append(memory.public_id)
    if draft.public_id and memory.public_id != draft.public_id:
        result.renumbered[draft.public_id] = memory.public_id
    return memory


def _relate(
    project: Project, by_id: dict[str, Memory], file: str, entry: str, relationship: Relationship
) -> None:
    ends = {}
    for end in ("source", "target"):
        ref = getattr(relationship, end)
        ends[end] = (
            by_id.get(ref) or Memory.objects.live().filter(project=project, public_id=ref).first()
        )
        if ends[end] is None:
            raise MemoryFileError(
                f"no memory {ref} in these files or the project", file=file, entry=entry, field=end
            )
    try:
        link(ends["source"], ends["target"], relationship.relationship)
    except InvalidMemory as exc:
        raise MemoryFileError(str(exc), file=file, entry=entry, field=exc.field) from None
    except MemoryConflict as exc:
        raise MemoryFileError(str(exc), file=file, entry=entry, field="relationship") from None
