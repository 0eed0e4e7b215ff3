"""Memories in the agent context: the decisions, open findings and preferences that matter
for the query, each type under its own heading, one line per memory with its id::

    ## Decisions
    - [DEC-002] Use OAuth 2.0 with JWT tokens — because stateless auth scales

A decision or finding whose files a later session edited is marked "(may be stale: …)".

Registered into search's context (``search/context_sections.py``) by ``MemoriesConfig.ready``.
With a query, the memories are those ``search_memories`` finds at the caller's
``min_relevance`` (every agent's: agents of a team read each other's decisions and findings);
without one ("where we are"), the latest decisions, every open finding (most severe first)
and the preferences, by priority. Lines are added best first while the budget lasts; a
memory of an archived session is left out unless archived sessions are asked for, as its
session is. What is shown counts as read.
"""

from __future__ import annotations

from django.db.models import Q

from memories.models import Memory, MemoryType, Resolution
from memories.retrieve.query import MemoryFilters, apply, visible
from memories.retrieve.read_counts import note_access
from memories.retrieve.search import search_memories
from search.context_sections import Section, SectionRequest
from sessions.embedding.tokens import count_tokens
from sessions.models import Lifecycle

HEADINGS = {
    MemoryType.DECISION: "## Decisions",
    MemoryType.FINDING: "## Open Findings",
    MemoryType.PREFERENCE: "## Preferences",
}
PER_TYPE = 10  # at most this many lines per section
SEVERITY_ORDER = {"critical": 0, "high": 1, "medium": 2, "low": 3}


def memory_sections(request: SectionRequest) -> list[Section]:
    if request.query.strip():
        ranked = _relevant(request)
    else:
        ranked = [(memory, 1.0) for memory in _current(request)]
    return _fitted(ranked, request)


def line(memory: Memory) -> str:
    """``- [DEC-002] <content> — because <rationale>`` (findings: severity, location)."""
    text = " ".join(memory.content.split())
    details = memory.details or {}
    if memory.type == MemoryType.DECISION and details.get("rationale"):
        text += f" — because {_flat(details['rationale'])}"
    elif memory.type == MemoryType.FINDING:
        if memory.severity:
            text = f"({memory.severity}) {text}"
        if details.get("location"):
            text += f" — at {_flat(details['location'])}"
    elif memory.type == MemoryType.PREFERENCE and memory.confidence:
        text += f" ({memory.confidence})"
    if memory.stale_since is not None:
        # Marked, not hidden: the agent checks it against the code before relying on it.
        text += " (may be stale: a later session edited its files)"
    return f"- [{memory.public_id}] {text}"


def _flat(value) -> str:
    if isinstance(value, list | tuple):
        return "; ".join(_flat(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_flat(v)}" for k, v in value.items())
    return " ".join(str(value).split())


def _filters(request: SectionRequest) -> MemoryFilters:
    # The sessions' time range, when one is asked for, applies to when a memory was said.
    # A person's context leaves out other people's memories; with their character too
    # (docs/people.md), other characters' memories unless shared.
    person = request.filters.person
    return MemoryFilters(
        types=tuple(HEADINGS),
        after=request.filters.started_after,
        before=request.filters.started_before,
        for_person=person,
        character=request.filters.agent if person else "",
    )


def _shown(queryset, request: SectionRequest):
    """Findings only while open; an archived session's memories only when asked for."""
    queryset = queryset.exclude(type=MemoryType.FINDING, resolution=Resolution.RESOLVED)
    if not request.include_archived:
        queryset = queryset.filter(
            Q(session__isnull=True) | ~Q(session__lifecycle=Lifecycle.ARCHIVED)
        )
    return queryset


def _relevant(request: SectionRequest) -> list[tuple[Memory, float]]:
    hits = search_memories(
        request.access,
        request.query,
        _filters(request),
        limit=PER_TYPE * len(HEADINGS),
        min_relevance=request.min_relevance,
    )
    allowed = set(
        _shown(Memory.objects.filter(pk__in=[h.memory.pk for h in hits]), request).values_list(
            "pk", flat=True
        )
    )
    return [(h.memory, h.relevance) for h in hits if h.memory.pk in allowed]


def _current(request: SectionRequest) -> list[Memory]:
    base = _shown(apply(visible(request.access), _filters(request)), request)
    decisions = base.filter(type=MemoryType.DECISION).order_by("-occurred_at", "-id")
    findings = sorted(
        base.filter(type=MemoryType.FINDING).order_by("-priority", "-occurred_at")[:50],
        key=lambda m: (SEVERITY_ORDER.get(m.severity, 4), -m.priority),
    )
    preferences = base.filter(type=MemoryType.PREFERENCE).order_by("-priority", "-occurred_at")
    return [*decisions[:PER_TYPE], *findings[:PER_TYPE], *preferences[:PER_TYPE]]


def _fitted(ranked: list[tuple[Memory, float]], request: SectionRequest) -> list[Section]:
    """Lines best first while they fit, grouped under their type's heading."""
    candidates = [(m, r) for m, r in ranked if m.type in HEADINGS]
    lines = [line(m) for m, _ in candidates]
    line_tokens = count_tokens(["\n" + text for text in lines]) if lines else []
    heading_tokens = dict(
        zip(HEADINGS, count_tokens(["\n\n" + h for h in HEADINGS.values()]), strict=True)
    )
    budget = request.budget
    chosen: dict[str, list[tuple[Memory, float, str, int]]] = {}
    for (memory, relevance), text, tokens in zip(candidates, lines, line_tokens, strict=True):
        group = chosen.get(memory.type)
        if group is not None and len(group) >= PER_TYPE:
            continue
        cost = tokens + (0 if group else heading_tokens[memory.type])
        if cost > budget:
            continue
        chosen.setdefault(memory.type, []).append((memory, relevance, text, tokens))
        budget -= cost
    sections = []
    for kind, heading in HEADINGS.items():
        group = chosen.get(kind)
        if not group:
            continue
        markdown = "\n".join([heading, *(text for _, _, text, _ in group)])
        tokens = heading_tokens[kind] + sum(t for *_, t in group)
        relevance = max(r for _, r, _, _ in group)
        ids = [m.public_id for m, *_ in group]
        sections.append(Section(heading, markdown, relevance, tokens, ids))
    if request.touch:
        note_access([m.pk for group in chosen.values() for m, *_ in group])
    return sections
