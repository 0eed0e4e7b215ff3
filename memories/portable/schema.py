"""The shape of memory files: what ``export`` writes and ``load`` accepts.

One shape per type, as the BMAD session folder writes them (``decisions.yaml``,
``findings.yaml``, ``preferences.yaml``, ``agent-states/<agent>.yaml``, and the
relationships), plus ``learnings.yaml`` and ``facts.yaml`` in the same style. A few fields
beyond that shape carry what a memory here has and the files do not, so an export imports
back whole: ``session`` (the session it came from), ``topic``, ``scope``, ``pinned``,
``status`` (proposed, rejected, superseded, reverted), ``history`` (every change of its
status: when, from, to, by whom, why), ``turn_refs`` (every evidence turn when more than one),
``decay.base_priority``, ``extra`` (the type's fields that have no place above), and seed
002's ``person`` (whom it is of) and ``shared`` (every character of that person sees it).

Every file is read as a ``MemoryFile`` whatever its name: its top-level keys say what it
holds, so one YAML document may hold several sections. Unknown keys are refused, naming them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memories.models import MAX_CONTENT_CHARS, LinkKind, MemoryScope, MemoryType


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Decay(Strict):
    priority: float | None = Field(None, ge=0, le=1)
    base_priority: float | None = Field(None, ge=0, le=1)
    last_accessed: datetime | None = None
    access_count: int = Field(0, ge=0)


Text = Field(min_length=1, max_length=MAX_CONTENT_CHARS)


class HistoryEntry(Strict):
    at: datetime
    from_status: str = Field("", max_length=10)
    to_status: str = Field(max_length=10)
    by: str = Field("", max_length=150)
    reason: str = Field("", max_length=500)
    related: str = Field("", max_length=24)


class Common(Strict):
    """What every memory has, whatever its type."""

    id: str = Field("", max_length=24)
    tags: list[str] = []
    confidence: str = Field("", max_length=12)
    topic: str = Field("", max_length=100)
    scope: Literal["session", "project", "team"] = MemoryScope.PROJECT.value
    pinned: bool = False
    status: Literal["proposed", "active", "rejected", "superseded", "reverted"] = "active"
    history: list[HistoryEntry] = []
    person: str = Field("", max_length=200)
    shared: bool = False
    extra: dict[str, Any] = {}
    decay: Decay = Decay()


class Said(Common):
    """A memory said at one turn of a session."""

    timestamp: datetime | None = None
    turn_ref: int | None = None
    turn_refs: list[int] = []
    session: str = ""


class Alternative(Strict):
    option: str
    rejected_because: str = ""


class Decision(Said):
    made_by: str = Field("", max_length=64)
    agreed_by: list[str] = []
    decision: str = Text
    rationale: str = ""
    agents_involved: list[str] = []
    alternatives_considered: list[Alternative] = []
    reversible: bool | None = None
    implementation_impact: str = ""


class Location(Strict):
    artifact: str = ""
    section: str = ""
    line_numbers: list[int] = []


class Resolution(Strict):
    status: Literal["open", "resolved"] = "open"
    resolved_at: str = ""
    resolved_by: str = ""
    action_taken: str = ""
    verification: str = ""
    next_steps: str = ""

    @field_validator("resolved_at")
    @classmethod
    def _a_time(cls, value: str) -> str:
        if value:
            datetime.fromisoformat(value)  # ValueError: pydantic names the field
        return value


class Finding(Said):
    discovered_by: str = Field("", max_length=64)
    severity: str = Field("", max_length=12)
    category: str = ""
    finding: str = Text
    location: Location | None = None
    impact: str = ""
    root_cause: str = ""
    resolution: Resolution | None = None


class AppliesTo(Strict):
    projects: list[str] = []
    domains: list[str] = []


class Preference(Said):
    created_by: str = Field("", max_length=64)
    category: str = ""
    preference: str = Text
    context: str = ""
    source: str = ""
    applies_to: AppliesTo | None = None


class Learning(Said):
    created_by: str = Field("", max_length=64)
    learning: str = Text


class Fact(Said):
    created_by: str = Field("", max_length=64)
    fact: str = Text


class AgentState(Common):
    agent_id: str = Field(min_length=1, max_length=64)
    session_id: str = ""
    last_updated: datetime | None = None
    timestamp: datetime | None = None  # when it was first recorded, if not last_updated
    current_context: dict[str, Any] = {}
    working_memory: dict[str, Any] = {}
    session_learnings: list[str] = []
    memory_refs: dict[str, Any] = {}


class Relationship(Strict):
    source: str
    target: str
    relationship: Literal[tuple(LinkKind.values)]  # type: ignore[valid-type]


class MemoryFile(Strict):
    decisions: list[Decision] = []
    findings: list[Finding] = []
    preferences: list[Preference] = []
    learnings: list[Learning] = []
    facts: list[Fact] = []
    agent_state: AgentState | None = None
    agent_states: list[AgentState] = []
    memory_relationships: list[Relationship] = []


# Per section: the memory type, the field holding its statement, the one naming its agent.
SECTIONS = {
    "decisions": (MemoryType.DECISION, "decision", "made_by"),
    "findings": (MemoryType.FINDING, "finding", "discovered_by"),
    "preferences": (MemoryType.PREFERENCE, "preference", "created_by"),
    "learnings": (MemoryType.LEARNING, "learning", "created_by"),
    "facts": (MemoryType.FACT, "fact", "created_by"),
}
SECTION_OF_TYPE = {kind: section for section, (kind, _, _) in SECTIONS.items()}
MODEL_OF_SECTION = {
    "decisions": Decision,
    "findings": Finding,
    "preferences": Preference,
    "learnings": Learning,
    "facts": Fact,
}
AGENT_STATE_SECTIONS = ("current_context", "working_memory", "session_learnings", "memory_refs")
# Fields stored in a memory's own columns, not in its details.
COLUMNS = {
    *Said.model_fields,
    "confidence",
    "severity",
    "resolution",
    *(statement for _, statement, _ in SECTIONS.values()),
    *(agent for _, _, agent in SECTIONS.values()),
}


def details_fields(section: str) -> set[str]:
    """The type's own fields that live in ``Memory.details``."""
    return set(MODEL_OF_SECTION[section].model_fields) - COLUMNS
