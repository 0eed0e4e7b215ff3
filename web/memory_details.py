"""A memory's own fields (``Memory.details``, the shape agents and imports write) as
labelled parts a page can show: a decision's rationale and alternatives, a finding's
location and resolution, a preference's scope, an agent's state.

Each type's important fields come first in a fixed order, the rest after in the order
written; what the page shows elsewhere (the statement itself, tags, topic, severity,
confidence, decay numbers, ids and times) is left out here."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from memories.models import MemoryType

MAX_DEPTH = 4

FIRST = {
    MemoryType.DECISION: (
        "rationale", "alternatives_considered", "made_by", "agents_involved", "agreed_by",
        "reversible", "implementation_impact",
    ),
    MemoryType.FINDING: (
        "category", "location", "impact", "root_cause", "resolution", "discovered_by",
    ),
    MemoryType.PREFERENCE: ("category", "context", "source", "applies_to"),
    MemoryType.AGENT_STATE: (
        "current_context", "working_memory", "session_learnings", "memory_refs",
    ),
}  # fmt: skip
SHOWN_ELSEWHERE = {
    "id", "timestamp", "turn_ref", "decay", "tags", "topic", "severity", "confidence",
    "decision", "finding", "preference", "learning", "fact", "content",
    "agent_id", "session_id", "last_updated",
}  # fmt: skip
# Sub-fields in the order a person reads them (stored JSON keeps no key order).
NESTED_FIRST = {
    "location": ("artifact", "section", "line_numbers"),
    "resolution": (
        "status", "action_taken", "verification", "resolved_by", "resolved_at", "next_steps",
    ),
    "current_context": ("current_task", "current_phase", "focus_area", "active_artifacts"),
    "working_memory": ("concerns_identified", "methods_applied", "verification_summary"),
    "applies_to": ("projects", "domains"),
    "memory_refs": ("decisions_made", "findings_created", "preferences_learned"),
}  # fmt: skip
# Values that are keys (missing_requirement) read as words.
WORDED = {"category", "source", "status"}
LABELS = {
    "rejected_because": "Rejected because",
    "line_numbers": "Lines",
    "applies_to": "Applies to",
    "memory_refs": "Related memories",
    "next_steps": "Next steps",
}


@dataclass(frozen=True)
class Node:
    """``kind``: text (a string), list (of strings), fields (of ``Field``), records (a
    list of nodes, each a group of fields), choices (options and why each was rejected)."""

    kind: str
    value: object


@dataclass(frozen=True)
class Field:
    label: str
    node: Node


def label(key: str) -> str:
    return LABELS.get(key) or key.replace("_", " ").strip().capitalize()


def _text(value, key: str = "") -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "—"
    if key in WORDED and isinstance(value, str):
        return value.replace("_", " ")
    if key.endswith("_at") or key in ("timestamp", "last_updated"):
        try:
            return datetime.fromisoformat(str(value)).strftime("%Y-%m-%d %H:%M")
        except ValueError:
            pass
    return str(value)


def _alternatives(value) -> bool:
    return all(isinstance(v, dict) and "option" in v for v in value) and bool(value)


def node(value, key: str = "", depth: int = 0) -> Node:
    if depth >= MAX_DEPTH and isinstance(value, dict | list):
        return Node("text", json.dumps(value, ensure_ascii=False, default=str))
    if isinstance(value, dict):
        return Node("fields", _fields(value, NESTED_FIRST.get(key, ()), depth + 1))
    if isinstance(value, list):
        if key == "line_numbers" and len(value) == 2 and all(isinstance(v, int) for v in value):
            return Node("text", f"{value[0]}–{value[1]}")
        if key == "alternatives_considered" and _alternatives(value):
            # "Session cookies — not suitable for API authentication"
            return Node(
                "choices",
                [(_text(v["option"]), _text(v.get("rejected_because") or "")) for v in value],
            )
        if any(isinstance(v, dict | list) for v in value):
            return Node("records", [node(v, "", depth + 1) for v in value])
        return Node("list", [_text(v) for v in value])
    return Node("text", _text(value, key))


def _fields(details: dict, first: tuple[str, ...], depth: int) -> list[Field]:
    keys = [k for k in first if k in details]
    keys += [k for k in details if k not in keys]
    return [
        Field(label(k), node(details[k], k, depth))
        for k in keys
        if details[k] not in (None, "", [], {})
    ]


def readable_details(memory) -> list[Field]:
    details = {k: v for k, v in (memory.details or {}).items() if str(k) not in SHOWN_ELSEWHERE}
    return _fields(details, FIRST.get(memory.type, ()), 0)
