"""What was decided, found, preferred and learned: typed memories linked to their evidence.

docs/memories.md is the data contract: a memory has a type (``MemoryType``), a per-project
readable id (``DEC-001``), its content, the type's own fields (``details``, in the seed's YAML
shape), tags, who made it, the messages it came from (``MemoryEvidence``), decay fields
(§7), pinned, a status and a scope. Memories relate to each other (``MemoryLink``, §3.3).

This app stands on ``sessions``; ``sessions`` and ``search`` never import it (they send
signals it listens to, ``memories/receivers.py``). Every row carries its team.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models.functions import Left
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField

from sessions.models import (
    EMBEDDING_DIMENSIONS,
    SEARCH_CONFIG,
    EnrichmentStatus,
    Message,
    Session,
)
from teams.models import Project, Team, Visibility, user_or_null

# Longest content a memory may have: a memory is a statement, not a transcript.
MAX_CONTENT_CHARS = 4000


class MemoryType(models.TextChoices):
    DECISION = "decision"
    FINDING = "finding"
    PREFERENCE = "preference"
    LEARNING = "learning"
    AGENT_STATE = "agent_state", "Agent state"
    FACT = "fact"


# The readable id's prefix per type (docs/memories.md: DEC-001, FIND-002, PREF-003).
ID_PREFIX = {
    MemoryType.DECISION: "DEC",
    MemoryType.FINDING: "FIND",
    MemoryType.PREFERENCE: "PREF",
    MemoryType.LEARNING: "LEARN",
    MemoryType.AGENT_STATE: "STATE",
    MemoryType.FACT: "FACT",
}
TYPE_OF_PREFIX = {prefix: kind for kind, prefix in ID_PREFIX.items()}


class MemoryScope(models.TextChoices):
    """Who a memory is for: the session it came from, its project, or every agent of the
    team (global preferences; docs/people.md's shared memories)."""

    SESSION = "session"
    PROJECT = "project"
    TEAM = "team"


class MemoryStatus(models.TextChoices):
    """Where a memory stands (``memories/capture/review.py`` moves it and keeps each move in
    its history): ``proposed`` waits for review (extracted below the project's confidence
    threshold), ``active`` is accepted and used, ``rejected`` is kept so the same statement
    is not proposed again, ``superseded`` replaced by a newer memory, ``reverted`` withdrawn
    by someone (a decision undone), ``deleted`` in the trash."""

    PROPOSED = "proposed"
    ACTIVE = "active"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"
    REVERTED = "reverted"
    DELETED = "deleted"


class Resolution(models.TextChoices):
    """A finding's state (docs/memories.md); empty for other types."""

    OPEN = "open"
    RESOLVED = "resolved"


class Origin(models.TextChoices):
    """Who recorded a memory."""

    AGENT = "agent"
    PERSON = "person"
    EXTRACTOR = "extractor"
    IMPORT = "import"


class LinkKind(models.TextChoices):
    """Relationships (docs/memories.md), read "source <kind> target"."""

    RESOLVES = "resolves"
    LED_TO = "led_to", "led to"
    INFLUENCED = "influenced"
    SUPERSEDES = "supersedes"
    RELATES_TO = "relates_to", "relates to"


class MemoryQuerySet(models.QuerySet):
    def of_live_sessions(self):
        """Not of a session in the trash (a memory of no session counts)."""
        return self.filter(
            models.Q(session__isnull=True) | models.Q(session__deleted_at__isnull=True)
        )

    def live(self):
        """Not deleted, and not of a session in the trash."""
        return self.exclude(status=MemoryStatus.DELETED).of_live_sessions()

    def active(self):
        return self.live().filter(status=MemoryStatus.ACTIVE)


class Memory(models.Model):
    # Its own owner and visibility; a 'summary' memory is team content once accepted
    # (teams.access.Access.readable).
    VISIBILITY_PATH = ""
    SUMMARY_CONTENT = models.Q(status=MemoryStatus.ACTIVE)

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+", db_index=False)
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="memories", db_index=False
    )
    session = models.ForeignKey(
        Session,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,
        help_text="The session it came from, if any; purged with it.",
    )
    public_id = models.CharField(max_length=24, help_text="Readable id, unique per project.")
    type = models.CharField(max_length=12, choices=MemoryType.choices)
    scope = models.CharField(max_length=8, choices=MemoryScope.choices, default=MemoryScope.PROJECT)
    content = models.TextField(help_text="The decision, finding, preference… in one statement.")
    details = models.JSONField(
        default=dict, blank=True, help_text="The type's own fields, in seed 001's YAML shape."
    )
    topic = models.CharField(
        max_length=100,
        blank=True,
        help_text="What it is about, as a key (mfa_requirements): a newer memory of the same "
        "type and topic that says otherwise supersedes it.",
    )
    tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    confidence = models.CharField(
        max_length=12,
        blank=True,
        help_text="high | medium | low | uncertain; a preference's explicit | inferred | "
        "uncertain.",
    )
    severity = models.CharField(max_length=12, blank=True, help_text="A finding's severity.")
    resolution = models.CharField(
        max_length=8, choices=Resolution.choices, blank=True, help_text="A finding's state."
    )
    agent = models.CharField(
        max_length=64, blank=True, help_text="The agent that made, found or holds it."
    )
    # People and characters (docs/people.md): the agent above is the character.
    person = models.CharField(
        max_length=200, blank=True, help_text="The person it is of (its session's user_name)."
    )
    shared = models.BooleanField(
        default=False,
        help_text="Visible to every character of its person (seed 002 _shared); else to its "
        "agent's character only, when a person's character asks.",
    )
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.AGENT)
    created_by = user_or_null()
    # Who reads it (teams.access.Access.scope; docs/visibility.md): its session's owner and
    # visibility when extracted, the recorder's choice (default: the project's) when
    # recorded. A 'summary' memory is read by the team once it is active (accepted).
    owner = user_or_null()
    visibility = models.CharField(
        max_length=8, choices=Visibility.choices, db_default=Visibility.TEAM
    )
    extractor = models.CharField(
        max_length=10, blank=True, help_text="offline or llm, for extracted memories."
    )
    occurred_at = models.DateTimeField(help_text="When it was said (its first evidence).")
    # Decay (docs/memories.md), with per-type rules (memories/decay.py).
    base_priority = models.FloatField(default=1.0)
    priority = models.FloatField(default=1.0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    access_count = models.PositiveIntegerField(default=0)
    pinned = models.BooleanField(default=False, help_text="Pinned memories never decay.")
    status = models.CharField(
        max_length=10, choices=MemoryStatus.choices, default=MemoryStatus.ACTIVE
    )
    # Staleness (memories/enrich/staleness.py): the files a decision or finding is about, as
    # comparison keys (memories/capture/files.py); flagged when a later session edits one.
    files = ArrayField(models.CharField(max_length=300), default=list, blank=True)
    stale_since = models.DateTimeField(
        null=True, blank=True, help_text="May be stale: a later session edited its files."
    )
    stale_session = models.ForeignKey(
        Session,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
        help_text="The session whose edits flagged it.",
    )
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by = user_or_null()
    delete_reason = models.CharField(max_length=500, blank=True)
    fingerprint = models.CharField(
        max_length=64, help_text="Hash of the normalised content: a restatement merges."
    )
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    search_vector = models.GeneratedField(
        expression=SearchVector(Left("content", MAX_CONTENT_CHARS), config=SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # Shared with every agent of the team whatever its project: seen from each of the team's
    # projects (``teams.access.Access.scope``).
    TEAM_WIDE_ROWS = models.Q(scope=MemoryScope.TEAM)

    objects = MemoryQuerySet.as_manager()

    class Meta:
        ordering = ["-occurred_at", "-id"]
        verbose_name_plural = "memories"
        constraints = [
            models.UniqueConstraint(
                fields=["project", "public_id"], name="memory_project_public_id_uniq"
            ),
        ]
        indexes = [
            models.Index(
                fields=["team", "project", "type", "-occurred_at"], name="memory_list_idx"
            ),
            models.Index(fields=["team", "-priority"], name="memory_team_priority_idx"),
            # The list's order (newest first), walked until a page of the caller's projects
            # and filters is found.
            models.Index(fields=["team", "-occurred_at", "-id"], name="memory_recent_idx"),
            # Rare rows a list asks for by themselves: walking the list's order to find a
            # page of them would read most of a big team.
            models.Index(
                fields=["team", "-occurred_at"],
                condition=models.Q(pinned=True),
                name="memory_pinned_idx",
            ),
            models.Index(
                fields=["team", "-occurred_at"],
                condition=models.Q(type="finding", resolution="open"),
                name="memory_open_findings_idx",
            ),
            models.Index(fields=["session"], name="memory_session_idx"),
            # The review queue and the rejections a new proposal is checked against.
            models.Index(
                fields=["team", "project", "-occurred_at"],
                condition=models.Q(status="proposed"),
                name="memory_proposed_idx",
            ),
            models.Index(
                fields=["project", "type"],
                condition=models.Q(status="rejected"),
                name="memory_rejected_idx",
            ),
            # The trash: its list, and the daily purge of what is past the recovery window.
            models.Index(
                fields=["team", "-deleted_at"],
                condition=models.Q(status="deleted"),
                name="memory_trash_idx",
            ),
            models.Index(
                fields=["team", "person"], condition=~models.Q(person=""), name="memory_person_idx"
            ),
            models.Index(fields=["project", "type", "fingerprint"], name="memory_fingerprint_idx"),
            models.Index(
                fields=["project", "type", "topic"],
                condition=~models.Q(topic=""),
                name="memory_topic_idx",
            ),
            GinIndex(fields=["search_vector"], name="memory_search_gin"),
            GinIndex(fields=["tags"], name="memory_tags_gin"),
            GinIndex(fields=["files"], name="memory_files_gin"),
            HnswIndex(
                name="memory_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} {self.content[:60]}"


class MemoryEvidence(models.Model):
    """A message a memory came from (or was restated in): every memory links back to the
    exact turns behind it."""

    VISIBILITY_PATH = "session__"  # a quote of its message, read as its session is

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+", db_index=False)
    memory = models.ForeignKey(
        Memory, on_delete=models.CASCADE, related_name="evidence", db_index=False
    )
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="+", db_index=False)
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="+", db_index=False)
    quote = models.TextField(blank=True, help_text="The sentence it was read from.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["memory", "id"]
        constraints = [
            models.UniqueConstraint(fields=["memory", "message"], name="evidence_memory_msg_uniq"),
        ]
        indexes = [
            models.Index(fields=["message"], name="evidence_message_idx"),
            models.Index(fields=["session"], name="evidence_session_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.memory_id} from message {self.message_id}"


class MemoryEvent(models.Model):
    """One change of a memory's status: from what to what, who (a person, or the agent,
    extractor or rule named in ``actor``), when and why. Goes with its memory (a cascade);
    the reason is anonymised with it (``memories/derived.py``)."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+", db_index=False)
    memory = models.ForeignKey(
        Memory, on_delete=models.CASCADE, related_name="history", db_index=False
    )
    from_status = models.CharField(
        max_length=10, blank=True, help_text="empty: recorded; a finding's open/resolved; stale"
    )
    to_status = models.CharField(max_length=10)
    by = user_or_null()
    actor = models.CharField(
        max_length=64, blank=True, help_text="who, when not a person: agent, extractor, system"
    )
    reason = models.CharField(max_length=500, blank=True)
    related = models.ForeignKey(
        Memory,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
        help_text="the memory it was superseded by, accepted after…",
    )
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["memory", "at", "id"]
        indexes = [models.Index(fields=["memory", "at"], name="memory_event_memory_idx")]

    def __str__(self) -> str:
        return f"{self.memory_id}: {self.from_status or 'new'} → {self.to_status}"

    @property
    def who(self) -> str:
        return self.by.get_username() if self.by_id else (self.actor or "system")


class MemoryLink(models.Model):
    """``source`` resolves / led to / influenced / supersedes / relates to ``target``."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+", db_index=False)
    source = models.ForeignKey(
        Memory, on_delete=models.CASCADE, related_name="links_out", db_index=False
    )
    target = models.ForeignKey(
        Memory, on_delete=models.CASCADE, related_name="links_in", db_index=False
    )
    kind = models.CharField(max_length=12, choices=LinkKind.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "target", "kind"], name="memory_link_uniq"),
            models.CheckConstraint(
                condition=~models.Q(source=models.F("target")), name="memory_link_not_self"
            ),
        ]
        indexes = [models.Index(fields=["target"], name="memory_link_target_idx")]

    def __str__(self) -> str:
        return f"{self.source_id} {self.kind} {self.target_id}"


class MemoryCounter(models.Model):
    """The last number given per project and id prefix (DEC-007 → 7)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    prefix = models.CharField(max_length=8)
    last = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "prefix"], name="memory_counter_uniq"),
        ]

    def __str__(self) -> str:
        return f"{self.prefix}-{self.last:03d}"


class MemoryExtraction(models.Model):
    """Where the extractor is in a session: messages up to ``through_seq`` are read.

    Pending when the session's enrichment moved past it (``memories/receivers.py``); failed
    with the reason, and retried with backoff, like other enrichment."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+", db_index=False)
    session = models.OneToOneField(
        Session, on_delete=models.CASCADE, related_name="+", db_index=True
    )
    status = models.CharField(
        max_length=10, choices=EnrichmentStatus.choices, default=EnrichmentStatus.PENDING
    )
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    through_seq = models.IntegerField(default=-1)
    method = models.CharField(max_length=10, blank=True, help_text="offline or llm")
    extracted_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["status", "updated_at"],
                condition=~models.Q(status="done"),
                name="memory_extract_todo_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"extraction of session {self.session_id}: {self.status}"


# The diary's model lives in its own package; imported here so Django registers it.
from memories.diary.models import DiaryDue, DiaryEntry  # noqa: E402, F401
