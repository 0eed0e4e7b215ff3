"""Recording a memory, the one write path of the API, the client, the extractor and imports.

``record`` redacts the draft as the project redacts its messages (``redact_draft``), numbers
a new memory (``numbering.py``), or folds it into the memory it restates or supersedes the
ones it contradicts (``consistency.py``); links it to its evidence messages; all in one
transaction, under a per-(project, type) advisory lock so two writers of the same statement
cannot both create it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection, transaction
from django.utils import timezone

from core.error_codes import ErrorCode
from core.errors import DomainError
from memories import visibility as audience
from memories.capture import consistency, status
from memories.capture.files import files_of
from memories.capture.numbering import next_public_id, note_used
from memories.decay import base_priority, priority_of
from memories.models import (
    MAX_CONTENT_CHARS,
    LinkKind,
    Memory,
    MemoryEvidence,
    MemoryLink,
    MemoryScope,
    MemoryStatus,
    MemoryType,
    Origin,
    Resolution,
)
from sessions.capture.redaction import redact_for
from sessions.models import Message, Session
from teams.models import Project

# Advisory lock space of memory writes: (space, project id · 8 + type's position).
WRITE_LOCK_SPACE = 0x6D656F  # "meo"
_TYPES = list(MemoryType.values)
_WORDS = re.compile(r"[a-z0-9]+")


class InvalidMemory(DomainError, ValueError):
    """A memory that cannot be written; ``field`` names the part that is wrong."""

    def __init__(self, message: str, field: str = "non_field_errors"):
        super().__init__(message)
        self.field = field

    def body(self) -> dict:
        return {self.field: [str(self)]}  # as DRF names a field in error


class MemoryConflict(DomainError):
    """The memory is not in the state the action needs (a supersedes cycle, a resolved
    finding resolved again). ``state`` (keywords) is what the API's 409 body adds beside
    the message: the state it is in, its recovery deadline…"""

    status = 409
    code = ErrorCode.CONFLICT

    def __init__(self, message: str, **state):
        super().__init__(message)
        self.state = state

    def body(self) -> dict:
        return {**super().body(), **self.state}


@dataclass
class Evidence:
    message: Message
    quote: str = ""


@dataclass
class MemoryDraft:
    """A memory as a writer describes it, before it is numbered or merged."""

    type: str
    content: str
    session: Session | None = None
    details: dict = field(default_factory=dict)
    topic: str = ""
    tags: list[str] = field(default_factory=list)
    confidence: str = ""
    severity: str = ""
    resolution: str = ""
    agent: str = ""
    person: str = ""  # default: its session's person (user_name)
    shared: bool = False  # every character of the person sees it (docs/people.md)
    scope: str = MemoryScope.PROJECT
    origin: str = Origin.AGENT
    created_by: object = None
    extractor: str = ""
    occurred_at: datetime | None = None
    evidence: list[Evidence] = field(default_factory=list)
    pinned: bool = False
    base_priority: float | None = None
    embedding: object = None  # computed from the content when not given
    public_id: str = ""  # an import keeps its DEC-001 when the project has none yet
    supersedes: list[Memory] = field(default_factory=list)
    # The consistency rules look for a restatement or contradiction; imports of whole files
    # and explicit "record this as new" turn it off.
    reconcile: bool = True
    # Who reads it (memories/visibility.py): empty, its session's (an extracted memory), else
    # the project's default for the team. A restatement or contradiction is looked for only
    # among memories of the same owner and visibility: one audience's memory never merges
    # into, supersedes or repeats the rejection of another's.
    owner_id: int | None = None
    visibility: str = ""


@dataclass
class Recorded:
    memory: Memory
    outcome: str  # "created" | "merged" | "rejected" (repeats a rejection: nothing written)
    superseded: list[Memory] = field(default_factory=list)


def fingerprint(text: str) -> str:
    """Same words, same fingerprint: case, punctuation and spacing do not matter."""
    return hashlib.sha256(" ".join(_WORDS.findall(text.lower())).encode()).hexdigest()


def validate(project: Project, draft: MemoryDraft) -> None:
    if draft.type not in _TYPES:
        raise InvalidMemory(
            f"Unknown memory type '{draft.type}'; one of: {', '.join(_TYPES)}.", "type"
        )
    content = (draft.content or "").strip()
    if not content:
        raise InvalidMemory("A memory needs its content.", "content")
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidMemory(
            f"The content has {len(content)} characters; a memory holds at most "
            f"{MAX_CONTENT_CHARS}. Record the gist and link the messages as evidence.",
            "content",
        )
    if draft.session is not None:
        if draft.session.project_id != project.pk:
            raise InvalidMemory("The session is not in this project.", "session")
        if draft.session.deleted_at is not None:
            raise InvalidMemory(
                "The session is in the trash; restore it before adding memories to it.",
                "session",
            )
    if draft.scope == MemoryScope.SESSION and draft.session is None:
        raise InvalidMemory("A memory scoped to a session needs its session.", "scope")
    if draft.resolution and draft.type != MemoryType.FINDING:
        raise InvalidMemory("Only findings have a resolution.", "resolution")
    for evidence in draft.evidence:
        if evidence.message.team_id != project.team_id or (
            draft.session is not None and evidence.message.session_id != draft.session.pk
        ):
            raise InvalidMemory("An evidence message is not in the memory's session.", "evidence")


def holder(draft: MemoryDraft) -> str:
    """The character that holds the memory. The extractors name who said it, and what the
    session's person said has the person as its speaker; but a person is not a character
    (docs/people.md): what Sam told Cathy is Cathy's, so her reads and her diary find it."""
    session = draft.session
    person = draft.person or (session.user_name if session else "")
    if session and session.agent_name and person and draft.agent.casefold() == person.casefold():
        return session.agent_name
    return draft.agent


def redact_draft(project: Project, draft: MemoryDraft) -> int:
    """Redact the draft's text in place as ``project`` redacts its messages: content,
    details, topic, tags, person and evidence quotes (the agent is a name memories are found
    by, as a session's agent is). A vector given with content that changed is dropped, so
    the memory is embedded from the redacted text, never the raw one. Returns how many
    values were replaced."""
    total = 0
    for name in ("content", "details", "topic", "tags", "person"):
        value, count = redact_for(project, getattr(draft, name))
        setattr(draft, name, value)
        total += count
        if name == "content" and count:
            draft.embedding = None
    for evidence in draft.evidence:
        evidence.quote, count = redact_for(project, evidence.quote)
        total += count
    return total


def record(project: Project, draft: MemoryDraft) -> Recorded:
    """Write ``draft`` as a new memory of ``project``, or fold it into the one it restates.
    Its text is redacted first (``redact_draft``). An extracted draft below the project's
    confidence threshold is recorded ``proposed`` and supersedes nothing until accepted; an
    extracted or imported draft that repeats a rejection is not recorded (outcome
    ``rejected``, with the rejection)."""
    redact_draft(project, draft)
    validate(project, draft)
    _give_ownership(project, draft)
    draft.content = draft.content.strip()
    draft.agent = holder(draft)
    if draft.type == MemoryType.FINDING and not draft.resolution:
        draft.resolution = Resolution.OPEN
    if draft.embedding is None:
        draft.embedding = _embed(draft.content)
    initial = MemoryStatus.PROPOSED if status.needs_review(project, draft) else MemoryStatus.ACTIVE
    by = draft.created_by if getattr(draft.created_by, "pk", None) else str(draft.origin)
    with transaction.atomic():
        _lock(project, draft.type)
        print_ = fingerprint(draft.content)
        rejected = status.rejection_of(project, draft, print_)
        if rejected is not None:
            return Recorded(rejected, "rejected")
        same = consistency.restated(project, draft, print_)
        if same is not None:
            merged = merge_into(same, draft)
            if merged.status == MemoryStatus.PROPOSED and initial == MemoryStatus.ACTIVE:
                # Said on purpose what waits for review: that is an acceptance.
                activate(merged, by=by, reason=f"recorded again by {draft.origin}")
            return Recorded(merged, "merged")
        contradicted = (
            consistency.contradicted(project, draft) if initial == MemoryStatus.ACTIVE else []
        )
        memory = _create(project, draft, initial)
        status.note(
            memory, "", initial, by=by, reason=status.initial_reason(project, draft, initial)
        )
        superseded = []
        for old in [*draft.supersedes, *contradicted]:
            if old.pk != memory.pk and old.status == MemoryStatus.ACTIVE:
                supersede(memory, old, by=by)
                superseded.append(old)
        return Recorded(memory, "created", superseded)


def _give_ownership(project: Project, draft: MemoryDraft) -> None:
    if draft.visibility:
        return
    ownership = (
        audience.of_session(draft.session)
        if draft.session is not None
        else audience.for_record(None, project)
    )
    draft.owner_id, draft.visibility = ownership.owner_id, ownership.visibility


def _embed(text: str):
    # The query path's runtime: a request recording one memory gets its vector in
    # milliseconds (the extractor passes vectors embedded in batches instead).
    from sessions.embedding.query import embed_query

    return embed_query(text)


def _lock(project: Project, kind: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(%s, %s)",
            [WRITE_LOCK_SPACE, project.pk * 8 + _TYPES.index(kind)],
        )


def _create(project: Project, draft: MemoryDraft, initial: str = MemoryStatus.ACTIVE) -> Memory:
    occurred = draft.occurred_at or _first_evidence_time(draft) or timezone.now()
    public_id = draft.public_id
    if not public_id or Memory.objects.filter(project=project, public_id=public_id).exists():
        public_id = next_public_id(project, draft.type)
    else:
        note_used(project, public_id)  # a kept DEC-007: the next new one is DEC-008
    base = draft.base_priority if draft.base_priority is not None else base_priority(draft.type)
    memory = Memory(
        team_id=project.team_id,
        project=project,
        session=draft.session,
        public_id=public_id,
        type=draft.type,
        scope=draft.scope,
        content=draft.content,
        details=draft.details,
        topic=draft.topic[:100],
        tags=_tags(draft.tags),
        confidence=draft.confidence,
        severity=draft.severity,
        resolution=draft.resolution,
        agent=draft.agent[:64],
        person=(draft.person or (draft.session.user_name if draft.session else ""))[:200],
        shared=draft.shared,
        origin=draft.origin,
        created_by=draft.created_by if getattr(draft.created_by, "pk", None) else None,
        owner_id=draft.owner_id,
        visibility=draft.visibility,
        extractor=draft.extractor,
        occurred_at=occurred,
        base_priority=base,
        pinned=draft.pinned,
        fingerprint=fingerprint(draft.content),
        embedding=draft.embedding,
        status=initial,
        files=files_of(draft),
    )
    memory.priority = priority_of(memory)
    memory.save()
    add_evidence(memory, draft.evidence)
    return memory


def _first_evidence_time(draft: MemoryDraft):
    times = [e.message.timestamp for e in draft.evidence if e.message.timestamp]
    return min(times) if times else None


def _tags(tags: list[str]) -> list[str]:
    return list(dict.fromkeys(t.strip().lower()[:64] for t in tags if t and t.strip()))[:20]


def add_evidence(memory: Memory, evidence: list[Evidence]) -> int:
    """Link ``memory`` to its evidence messages; each quote is redacted as the project's
    messages are (a draft's already were: a second pass finds nothing)."""
    rows = [
        MemoryEvidence(
            team_id=memory.team_id,
            memory=memory,
            message=e.message,
            session_id=e.message.session_id,
            quote=redact_for(memory.project, e.quote)[0][:1000] if e.quote else "",
        )
        for e in evidence
    ]
    return len(MemoryEvidence.objects.bulk_create(rows, ignore_conflicts=True))


def merge_into(memory: Memory, draft: MemoryDraft) -> Memory:
    """A restatement: one more access, its evidence and tags added, missing fields filled."""
    now = timezone.now()
    memory.access_count += 1
    memory.last_accessed_at = now
    memory.tags = _tags([*memory.tags, *draft.tags])
    memory.details = {**draft.details, **memory.details}
    for name in ("confidence", "severity", "topic", "agent"):
        if not getattr(memory, name) and getattr(draft, name):
            setattr(memory, name, getattr(draft, name))
    memory.priority = priority_of(memory, now)
    memory.save(
        update_fields=[
            "access_count",
            "last_accessed_at",
            "tags",
            "details",
            "confidence",
            "severity",
            "topic",
            "agent",
            "priority",
            "updated_at",
        ]
    )
    add_evidence(memory, draft.evidence)
    return memory


def activate(memory: Memory, *, by, reason: str) -> list[Memory]:
    """Make ``memory`` (locked by the caller) active, keep the change in its history, and
    let it supersede the active memories it contradicts (a proposal did not until now).
    Returns those it superseded."""
    before = memory.status
    memory.status = MemoryStatus.ACTIVE
    memory.priority = priority_of(memory, timezone.now())
    memory.save(update_fields=["status", "priority", "updated_at"])
    status.note(memory, before, MemoryStatus.ACTIVE, by=by, reason=reason)
    draft = MemoryDraft(
        type=memory.type,
        content=memory.content,
        session=memory.session,
        details=memory.details,
        topic=memory.topic,
        scope=memory.scope,
        agent=memory.agent,
        embedding=memory.embedding,
        owner_id=memory.owner_id,
        visibility=memory.visibility,
    )
    retired = []
    for old in consistency.contradicted(memory.project, draft):
        if old.pk != memory.pk and old.status == MemoryStatus.ACTIVE:
            supersede(memory, old, by=by)
            retired.append(old)
    return retired


def supersede(newer: Memory, older: Memory, *, by=None) -> None:
    """``newer`` replaces ``older``, which stays as history (status superseded, the change
    kept in its history with the newer memory linked)."""
    if would_cycle(newer, older, LinkKind.SUPERSEDES):
        raise MemoryConflict(f"{older.public_id} already supersedes {newer.public_id}.")
    MemoryLink.objects.get_or_create(
        team_id=newer.team_id, source=newer, target=older, kind=LinkKind.SUPERSEDES
    )
    changed = Memory.objects.filter(pk=older.pk, status=MemoryStatus.ACTIVE).update(
        status=MemoryStatus.SUPERSEDED,
        stale_since=None,
        stale_session=None,
        updated_at=timezone.now(),
    )
    if changed:
        if by is None:
            by = newer.created_by if newer.created_by_id else str(newer.origin)
        status.note(
            older,
            MemoryStatus.ACTIVE,
            MemoryStatus.SUPERSEDED,
            by=by,
            reason=f"superseded by {newer.public_id}",
            related=newer,
        )
    older.status = MemoryStatus.SUPERSEDED


def would_cycle(source: Memory, target: Memory, kind: str) -> bool:
    """Would ``source kind target`` close a cycle of that kind (A supersedes B supersedes A)?"""
    if kind != LinkKind.SUPERSEDES:
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH RECURSIVE reach(id) AS (
                SELECT %(target)s::bigint
                UNION
                SELECT l.target_id FROM memories_memorylink l JOIN reach r ON l.source_id = r.id
                WHERE l.kind = 'supersedes'
            )
            SELECT EXISTS (SELECT 1 FROM reach WHERE id = %(source)s)
            """,
            {"source": source.pk, "target": target.pk},
        )
        return cursor.fetchone()[0]


def link(source: Memory, target: Memory, kind: str) -> MemoryLink:
    """Relate two memories of the same team; ``supersedes`` also retires the target."""
    if kind not in LinkKind.values:
        raise InvalidMemory(
            f"Unknown relationship '{kind}'; one of: {', '.join(LinkKind.values)}.", "kind"
        )
    if source.pk == target.pk:
        raise InvalidMemory("A memory cannot relate to itself.", "target")
    if source.team_id != target.team_id:
        raise InvalidMemory("No such memory.", "target")  # another team's: as if missing
    with transaction.atomic():
        _lock(source.project, source.type)
        if would_cycle(source, target, kind):
            raise MemoryConflict(
                f"{target.public_id} already supersedes {source.public_id} (directly or "
                "through others): a cycle of supersedes is refused."
            )
        if kind == LinkKind.SUPERSEDES:
            supersede(source, target)
            return MemoryLink.objects.get(source=source, target=target, kind=kind)
        made, _ = MemoryLink.objects.get_or_create(
            team_id=source.team_id, source=source, target=target, kind=kind
        )
        return made


def resolve(
    finding: Memory,
    *,
    by: str,
    action_taken: str = "",
    verification: str = "",
    resolved_by: Memory | None = None,
) -> Memory:
    """Mark an open finding resolved (docs/memories.md). The row is locked
    and read again first: of two callers resolving at once, the second gets the conflict."""
    now = timezone.now()
    by, action_taken, verification = (
        redact_for(finding.project, text)[0] for text in (by, action_taken, verification)
    )
    with transaction.atomic():
        finding = Memory.objects.select_for_update().get(pk=finding.pk)
        if finding.type != MemoryType.FINDING:
            raise InvalidMemory("Only findings are resolved.", "type")
        if finding.status == MemoryStatus.DELETED:
            raise MemoryConflict(f"{finding.public_id} is deleted; restore it first.")
        if finding.resolution == Resolution.RESOLVED:
            raise MemoryConflict(f"{finding.public_id} is already resolved.")
        details = dict(finding.details)
        details["resolution"] = {
            **(details.get("resolution") or {}),
            "status": "resolved",
            "resolved_at": now.isoformat(),
            "resolved_by": by,
            **({"action_taken": action_taken} if action_taken else {}),
            **({"verification": verification} if verification else {}),
        }
        finding.details = details
        finding.resolution = Resolution.RESOLVED
        finding.priority = priority_of(finding, now)
        finding.save(update_fields=["details", "resolution", "priority", "updated_at"])
        status.note(
            finding,
            Resolution.OPEN,
            Resolution.RESOLVED,
            by=by,
            reason=action_taken or verification or "resolved",
            related=resolved_by,
        )
        if resolved_by is not None:
            link(resolved_by, finding, LinkKind.RESOLVES)
    return finding


def update_agent_state(
    project: Project,
    *,
    agent: str,
    session: Session | None,
    state: dict,
    by=None,
    ownership: audience.Ownership | None = None,
) -> Recorded:
    """docs/memories.md: one current state per agent (and session); an update merges the
    given sections (current_context, working_memory, session_learnings, memory_refs) into it.
    A new state gets ``ownership`` (default: as any memory recorded, ``_give_ownership``);
    the state updated is one of the same owner."""
    if not agent.strip():
        raise InvalidMemory("An agent state needs its agent.", "agent")
    # Before the text is rendered from it, so neither the sections nor the content hold
    # what the project redacts.
    state, _ = redact_for(project, state)
    with transaction.atomic():
        _lock(project, MemoryType.AGENT_STATE)
        current = (
            Memory.objects.active()
            .filter(project=project, type=MemoryType.AGENT_STATE, agent=agent, session=session)
            .filter(**({"owner_id": ownership.owner_id} if ownership else {}))
            .select_for_update(of=("self",))  # not the outer-joined session
            .first()
        )
        if current is None:
            draft = MemoryDraft(
                type=MemoryType.AGENT_STATE,
                content=agent_state_text(agent, state),
                session=session,
                details=state,
                agent=agent,
                topic=f"agent:{agent}",
                scope=MemoryScope.SESSION if session else MemoryScope.PROJECT,
                created_by=by,
                reconcile=False,
            )
            if ownership is not None:
                draft.owner_id, draft.visibility = ownership.owner_id, ownership.visibility
            return record(project, draft)
        current.details = {**current.details, **state}
        current.content = agent_state_text(agent, current.details)
        current.fingerprint = fingerprint(current.content)
        current.embedding = _embed(current.content)
        current.last_accessed_at = timezone.now()
        current.priority = priority_of(current)
        current.save()
        return Recorded(current, "merged")


def agent_state_text(agent: str, state: dict) -> str:
    """A searchable one-paragraph rendering of an agent's state."""
    context = state.get("current_context") or {}
    parts = [f"{agent}:"]
    for key in ("current_task", "current_phase", "focus_area"):
        if context.get(key):
            parts.append(f"{key.replace('_', ' ')} {context[key]};")
    for learning in (state.get("session_learnings") or [])[:10]:
        parts.append(f"learned: {learning};")
    return " ".join(parts)[:MAX_CONTENT_CHARS]
