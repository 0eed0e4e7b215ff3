"""Agent sessions and what is derived from them.

- ``Session``: one conversation of an agent (docs/api.md, "Capture and
  import"), scoped to a project (by working directory), soft-deletable ("Deleting").
- ``Message``: one turn, keyword-searchable the moment it commits (a generated tsvector).
- ``MessageChunk``: the vectors. all-MiniLM-L6-v2 reads only 256 word pieces, so a long
  message is split into overlapping chunks, each with its own vector, to be searchable in full.
- ``Entity``: files, functions, classes, errors, commands, URLs and packages (docs/search.md).

Every row carries its team (ARCHITECTURE.md: every query filters by team; Citus-ready).
"""

from __future__ import annotations

import re
import secrets

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import F, Func
from django.db.models.functions import Cast, Left
from django.utils import timezone
from pgvector.django import BitField, HnswIndex, VectorField

from teams.models import Project, Team, Visibility, user_or_null
from transcripts.registry import stored_formats

EMBEDDING_DIMENSIONS = 384
# Text-search configuration of the tsvector column and of every query against it.
SEARCH_CONFIG = "english"
# A message's keyword vectors: large, read by keyword search only. Every other read of
# messages defers them (``.defer(*KEYWORD_VECTORS)``), so a new one is added here once.
KEYWORD_VECTORS = ("search_vector", "context_vector", "ranking_vector")
# PostgreSQL refuses a tsvector over 1 MB; text of short distinct tokens can produce ~3 bytes
# of tsvector per character, so only the first 250,000 characters of a message are
# keyword-indexed. (Its vectors, from chunks, cover all of it.)
KEYWORD_INDEX_CHARS = 250_000


# Where a session came from: the REST API, or a transcript format. The formats declare
# themselves (``transcripts.registry``) and the choices are read from there when asked, so a
# new format needs no migration.
API_SOURCE = "api"


def source_formats() -> list[tuple[str, str]]:
    return [(API_SOURCE, "REST API (messages)"), *stored_formats()]


# Choices whose label is their name in title case ("completed" is shown as "Completed") give
# only their value.
class SessionStatus(models.TextChoices):
    """How the session ended, as its transcript or client tells."""

    COMPLETED = "completed"
    INTERRUPTED = "interrupted"
    ERROR = "error"
    ACTIVE = "active"


class Lifecycle(models.TextChoices):
    """docs/operations.md, "Sessions fade by themselves"; deletion is the separate soft-delete
    fields, purge removes the row."""

    ACTIVE = "active"
    IDLE = "idle"
    DECAYING = "decaying"
    ARCHIVED = "archived"


class MessageRole(models.TextChoices):
    """Who wrote a message (a team member's role is ``teams.models.Role``)."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class MessageKind(models.TextChoices):
    """What a message is, for ranking: what people and agents said outranks what a harness
    injected or a tool printed for the same match (search/ranking.py), unless the question
    asks for that. Set at capture (sessions/capture/message_kind.py)."""

    PROSE = "prose", "Said by a person or an agent"
    INJECTED = "injected", "Injected instructions (system prompts, AGENTS.md, skills)"
    CONSOLE = "console", "Console banner or status line"
    TOOL_OUTPUT = "tool_output", "Tool output"


class EnrichmentStatus(models.TextChoices):
    """Where a row is in the background work: a message's embedding, a session's enrichment."""

    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


class EntityType(models.TextChoices):
    FILE = "FILE"
    FUNCTION = "FUNCTION"
    CLASS = "CLASS"
    ERROR = "ERROR"
    COMMAND = "COMMAND"
    URL = "URL", "URL"
    PACKAGE = "PACKAGE"


class Enrichable(models.Model):
    """Status of background work on a row, so a sweeper can find what was left undone."""

    enrichment_status = models.CharField(
        max_length=10, choices=EnrichmentStatus.choices, default=EnrichmentStatus.PENDING
    )
    enrichment_error = models.TextField(blank=True)
    enrichment_attempts = models.PositiveSmallIntegerField(default=0)
    enriched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


def _owned_by(owner: type[models.Model], related_name: str) -> models.ForeignKey:
    """The row a row belongs to (its project, session or message): deleted with it, and
    indexed only by the composite indexes that lead with it (no unnamed index of its own)."""
    return models.ForeignKey(
        owner, on_delete=models.CASCADE, related_name=related_name, db_index=False
    )


def _embedding_index(name: str) -> HnswIndex:
    """The HNSW index of an ``embedding`` column, for cosine distance (the operator search
    orders by), with pgvector's default build parameters."""
    return HnswIndex(
        name=name, fields=["embedding"], m=16, ef_construction=64, opclasses=["vector_cosine_ops"]
    )


class TeamOwned(models.Model):
    """A row of a team's sessions: it carries its team (every query filters by it, without a
    join) and when it was created. Callers reach rows through ``teams.access.Access.scope``."""

    # Indexed only by the composite indexes that lead with it (db_index=False avoids an
    # unnamed one).
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+", db_index=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True


_AGENT_SLUG = re.compile(r"[^a-z0-9]+")


def agent_slug(agent_name: str) -> str:
    """Lowercase agent identifier as session ids use it ("Claude Code" → "claude-code")."""
    return _AGENT_SLUG.sub("-", agent_name.lower()).strip("-")[:64] or "agent"


def new_public_id(agent_name: str, when) -> str:
    """A session's public id (docs/api.md): ``YYYY-MM-DD-{agent}-{6 hex}``
    (e.g. 2025-01-15-architect-a7b3c9)."""
    return f"{when:%Y-%m-%d}-{agent_slug(agent_name)}-{secrets.token_hex(3)}"


class SessionQuerySet(models.QuerySet):
    def alive(self):
        return self.filter(deleted_at__isnull=True)

    def in_trash(self):
        return self.filter(deleted_at__isnull=False)


class SessionPartQuerySet(models.QuerySet):
    """Rows that belong to a session: messages, their chunks, entities."""

    def of_session(self, session: Session):
        """The rows of ``session``, a session the caller may see (looked up through
        ``teams.access.Access.scope``). Its team is named too: every row's team leads its
        indexes."""
        return self.filter(session=session, team_id=session.team_id)


class MessageQuerySet(SessionPartQuerySet):
    def requeue_unembedded(self, session_pk: int) -> int:
        """Put the session's messages that have no chunks back to pending embedding (removed
        messages stay as they are); returns how many. The caller holds the session row. A
        capture into an archived session and leaving the archive both do it."""
        return (
            self.filter(session_id=session_pk, removed_at__isnull=True)
            .exclude(chunks__isnull=False)
            .update(
                enrichment_status=EnrichmentStatus.PENDING,
                enrichment_attempts=0,
                enrichment_error="",
                claimed_by=None,
            )
        )


class Session(Enrichable, TeamOwned):
    project = _owned_by(Project, "sessions")
    public_id = models.CharField(max_length=100, editable=False)
    external_id = models.CharField(
        max_length=255, blank=True, help_text="The client's own id; unique per project."
    )
    agent_name = models.CharField(max_length=64)
    agent_persona = models.CharField(max_length=100, blank=True)
    workflow = models.CharField(max_length=100, default="none")
    title = models.CharField(max_length=300, blank=True)
    user_name = models.CharField(
        max_length=200, blank=True, help_text="The person the agent worked with, if known."
    )
    # Who reads it (teams.access.Access.scope; docs/visibility.md). The owner is the person
    # who captured it (signed in, or the person their token acts for); NULL: the team's.
    owner = user_or_null()
    visibility = models.CharField(
        max_length=8, choices=Visibility.choices, db_default=Visibility.TEAM
    )
    source_format = models.CharField(max_length=32, choices=source_formats, default=API_SOURCE)
    status = models.CharField(
        max_length=12, choices=SessionStatus.choices, default=SessionStatus.COMPLETED
    )
    lifecycle = models.CharField(max_length=10, choices=Lifecycle.choices, default=Lifecycle.ACTIVE)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    message_count = models.PositiveIntegerField(default=0)
    # The seq the next captured message takes: one past the highest ever stored (compaction
    # and removal never lower it, so it is not message_count). Captures read it from the row
    # they lock instead of asking the messages for MAX(seq).
    next_seq = models.PositiveIntegerField(db_default=0)
    size_bytes = models.PositiveBigIntegerField(default=0)
    topics = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    artifacts = ArrayField(models.CharField(max_length=500), default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    summary = models.TextField(blank=True)
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    embedding_model = models.CharField(max_length=100, blank=True)
    enriched_through_seq = models.IntegerField(
        default=-1, help_text="Messages up to this seq are in the summary and entities."
    )
    updated_at = models.DateTimeField(auto_now=True)
    # Decay (docs/operations.md): its inputs (reads are counted by
    # sessions/forget/read_counts.py) and the priority the lifecycle run computes from them.
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    access_count = models.PositiveIntegerField(default=0)
    # Database defaults (db_default) for the columns added to big tables: bulk loads that write
    # rows in SQL (bench/) need not know them.
    decay_priority = models.FloatField(
        db_default=1.0, help_text="0..1: falls with time since the last read, rises with reads."
    )
    last_active_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Last read or new message: the lifecycle's clock (idle, decaying, archived).",
    )
    archived_at = models.DateTimeField(null=True, blank=True)
    # Soft delete (docs/api.md, "Deleting"): recoverable until purged.
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by = user_or_null()
    delete_reason = models.CharField(max_length=500, blank=True)

    objects = SessionQuerySet.as_manager()

    VISIBILITY_PATH = ""  # its own owner and visibility (teams.access.Access.readable)

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["public_id"], name="session_public_id_uniq"),
            models.UniqueConstraint(
                fields=["project", "external_id"],
                condition=~models.Q(external_id=""),
                name="session_project_external_uniq",
            ),
        ]
        indexes = [
            models.Index(fields=["team", "-started_at", "-id"], name="session_team_started_idx"),
            models.Index(
                fields=["project", "-started_at", "-id"], name="session_project_started_idx"
            ),
            models.Index(fields=["project", "agent_name"], name="session_project_agent_idx"),
            models.Index(fields=["deleted_at"], name="session_deleted_idx"),
            # Not on updated_at, which every append changes: an update that changes no
            # indexed column can be HOT (no new entry in any index, the embedding's HNSW
            # graph included); the sessions waiting for enrichment are few, and sorted.
            models.Index(
                fields=["enrichment_status"],
                condition=~models.Q(enrichment_status="done"),
                name="session_enrich_pending_idx",
            ),
            GinIndex(fields=["topics"], name="session_topics_gin"),
            _embedding_index("session_embedding_hnsw"),
        ]

    def __str__(self) -> str:
        return self.public_id

    def save(self, *args, **kwargs):
        self.agent_name = (self.agent_name or "").strip().lower() or "agent"
        if not self.started_at:
            self.started_at = timezone.now()
        if not self.public_id:
            self.public_id = new_public_id(self.agent_name, self.started_at)
        super().save(*args, **kwargs)


class Message(Enrichable, TeamOwned):
    session = _owned_by(Session, "messages")
    VISIBILITY_PATH = "session__"  # read as its session is
    seq = models.PositiveIntegerField(help_text="Order within the session, from 0.")
    client_id = models.CharField(
        max_length=255, blank=True, help_text="The client's message id; a retry never duplicates."
    )
    role = models.CharField(max_length=10, choices=MessageRole.choices)
    author = models.CharField(max_length=200, blank=True)
    content = models.TextField(blank=True)
    tool_name = models.CharField(max_length=200, blank=True)
    tool_call_id = models.CharField(
        max_length=255, blank=True, help_text="Links a tool call to its result."
    )
    timestamp = models.DateTimeField(null=True, blank=True)
    token_count = models.PositiveIntegerField(default=0)
    metadata = models.JSONField(default=dict, blank=True)
    pinned = models.BooleanField(db_default=False, help_text="Pinned messages are never compacted.")
    kind = models.CharField(
        max_length=16,
        choices=MessageKind.choices,
        db_default=MessageKind.PROSE,
        help_text="Prose, injected instructions, a console banner or tool output: ranking "
        "puts prose first for the same match.",
    )
    # A removed message stays as a tombstone (docs/api.md): its place in the session and who
    # removed it when; its content, vectors and entities are gone.
    removed_at = models.DateTimeField(null=True, blank=True)
    removed_by = models.CharField(max_length=200, blank=True, db_default="")
    search_vector = models.GeneratedField(
        expression=SearchVector(Left("content", KEYWORD_INDEX_CHARS), config=SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    context_vector = SearchVectorField(
        null=True,
        blank=True,
        help_text="Keywords of the message's surroundings (the two messages before it and the "
        "date): a question's words find the answer that follows it. "
        "See sessions/capture/keyword_context.py.",
    )
    ranking_vector = SearchVectorField(
        null=True,
        blank=True,
        help_text="What keyword search ranks the message on: its own words (weight A) and "
        "its context's, kept with the context (sessions/capture/keyword_context.py).",
    )
    claimed_by = models.IntegerField(
        null=True,
        blank=True,
        editable=False,
        help_text="The embedding batch working on it; live while that worker's database "
        "connection holds the batch's advisory lock (sessions/enrich/pipeline.py).",
    )

    objects = MessageQuerySet.as_manager()

    class Meta:
        ordering = ["session", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="message_session_seq_uniq"),
            models.UniqueConstraint(
                fields=["session", "client_id"],
                condition=~models.Q(client_id=""),
                name="message_session_client_uniq",
            ),
        ]
        indexes = [
            models.Index(fields=["team", "timestamp"], name="message_team_time_idx"),
            # The keyword side ANDs a word's GIN matches with the team's messages: a bare team
            # key deduplicates to a fraction of (team, timestamp)'s size, and its bitmap builds
            # faster (docs/benchmarks.md).
            models.Index(fields=["team"], name="message_team_idx"),
            models.Index(
                fields=["session", "tool_call_id"],
                condition=~models.Q(tool_call_id=""),
                name="message_tool_call_idx",
            ),
            models.Index(
                fields=["enrichment_status", "created_at"],
                condition=~models.Q(enrichment_status="done"),
                name="message_enrich_todo_idx",
            ),
            GinIndex(fields=["search_vector"], name="message_search_gin"),
            GinIndex(fields=["context_vector"], name="message_context_gin"),
            # The pipeline's recent throughput ("embedded in the last 5 minutes") reads a
            # narrow time range; without it, the count scans every message.
            models.Index(fields=["enriched_at"], name="message_enriched_at_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.seq} {self.role}"


class MessageChunk(TeamOwned):
    """A piece of a message with its vector; short messages have exactly one chunk."""

    session = _owned_by(Session, "chunks")
    VISIBILITY_PATH = "session__"  # read as its session is
    message = _owned_by(Message, "chunks")
    index = models.PositiveSmallIntegerField(help_text="Position of the chunk in its message.")
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    text = models.TextField(help_text="What was embedded (the chunk, with its context).")
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS)
    # The vector's signs, one bit per dimension (pgvector's binary_quantize): 48 bytes that a
    # covering index holds, so a scope's nearest candidates are found by Hamming distance
    # without reading the 1.5 KB vectors (search/semantic.py, the "quantized" path).
    embedding_bits = models.GeneratedField(
        expression=Cast(
            Func(F("embedding"), function="binary_quantize", output_field=BitField()),
            BitField(length=EMBEDDING_DIMENSIONS),
        ),
        output_field=BitField(length=EMBEDDING_DIMENSIONS),
        db_persist=True,
    )
    model = models.CharField(max_length=100)

    objects = SessionPartQuerySet.as_manager()

    class Meta:
        ordering = ["message", "index"]
        constraints = [
            models.UniqueConstraint(fields=["message", "index"], name="chunk_message_index_uniq"),
        ]
        indexes = [
            # Covering: a team's chunks and their bits come from the index alone.
            models.Index(
                fields=["team"],
                include=["id", "session", "embedding_bits"],
                name="chunk_team_bits_idx",
            ),
            models.Index(fields=["session"], name="chunk_session_idx"),
            _embedding_index("chunk_embedding_hnsw"),
        ]

    def __str__(self) -> str:
        return f"chunk {self.index} of message {self.message_id}"


class Entity(TeamOwned):
    """A thing a session touched, deduplicated per session by (type, normalised value)."""

    session = _owned_by(Session, "entities")
    VISIBILITY_PATH = "session__"  # read as its session is
    message = models.ForeignKey(
        Message,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="entities",
        db_index=False,
        help_text="The first message it appeared in.",
    )
    type = models.CharField(max_length=10, choices=EntityType.choices)
    value = models.CharField(max_length=500)
    normalized = models.CharField(max_length=500)
    context = models.TextField(blank=True, help_text="Text around its first appearance.")
    count = models.PositiveIntegerField(default=1)

    objects = SessionPartQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "entities"
        ordering = ["type", "normalized"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "type", "normalized"], name="entity_session_type_value_uniq"
            ),
        ]
        indexes = [
            models.Index(fields=["team", "type", "normalized"], name="entity_team_type_value_idx"),
            models.Index(fields=["message"], name="entity_message_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.value}"


class DeletionScope(models.TextChoices):
    SESSION = "session", "One session"
    MESSAGE = "message", "One message"
    FILTER = "filter", "Sessions matching a filter"
    SELECTION = "selection", "Selected sessions"
    RETENTION = "retention", "Retention policy"
    MEMORY = "memory", "Memories"


class DeletionRecord(models.Model):
    """What a deletion removed, kept after the purge (docs/api.md): who, when, why, what
    scope and how much, and until when it can be undone. Never any content."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+", db_index=False)
    project = models.ForeignKey(
        Project,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    project_label = models.CharField(max_length=201, help_text="team/project, as it was.")
    scope = models.CharField(max_length=10, choices=DeletionScope.choices)
    criteria = models.JSONField(
        default=dict, blank=True, help_text="The filter or message that was named."
    )
    session_ids = ArrayField(
        models.CharField(max_length=100),
        default=list,
        blank=True,
        help_text="Public ids of the sessions it moved or changed.",
    )
    deleted_by = user_or_null()
    actor = models.CharField(max_length=200, help_text="Who: a person, a token, or a policy.")
    reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sessions = models.PositiveIntegerField(default=0)
    messages = models.PositiveIntegerField(default=0)
    bytes = models.PositiveBigIntegerField(default=0)
    recovery_deadline = models.DateTimeField(
        null=True, blank=True, help_text="Empty when it cannot be undone (a removed message)."
    )
    restored_sessions = models.PositiveIntegerField(default=0)
    # A deletion of memories (scope "memory"): their readable ids (DEC-001: ids, not content)
    # and how many of them were restored.
    memories = models.PositiveIntegerField(default=0)
    memory_ids = ArrayField(
        models.CharField(max_length=24),
        default=list,
        blank=True,
        help_text="Readable ids of the memories it moved to the trash.",
    )
    restored_memories = models.PositiveIntegerField(default=0)
    purged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["team", "-created_at"], name="deletion_team_created_idx"),
            GinIndex(fields=["session_ids"], name="deletion_session_ids_gin"),
            GinIndex(fields=["memory_ids"], name="deletion_memory_ids_gin"),
        ]

    def __str__(self) -> str:
        return f"{self.get_scope_display()} by {self.actor} at {self.created_at:%Y-%m-%d %H:%M}"


class Pseudonym(models.Model):
    """The placeholder anonymisation gave a person, project name, e-mail address, phone
    number or IP address in a project ("User-1", "Project-A", "[EMAIL-2]"), so later runs
    give it the same one. Keyed by a keyed hash of the value: the value itself is not kept."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    kind = models.CharField(max_length=10)
    digest = models.CharField(max_length=64)
    label = models.CharField(max_length=40)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "kind", "digest"], name="pseudonym_project_digest_uniq"
            ),
            models.UniqueConstraint(
                fields=["project", "kind", "label"], name="pseudonym_project_label_uniq"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.label}"


class SpeakerAlias(TeamOwned):
    """A name a project's people or agents are called by that is not their display name:
    "Kate" for the author "Katherine", the persona "Winston" for the agent ``architect``.
    Learned from the sessions (sessions/enrich/aliases.py); a question that uses the alias
    finds that speaker's messages (search/aliases.py)."""

    class Source(models.TextChoices):
        VOCATIVE = "vocative", "Addressed by it"
        SELF = "self", "Introduced themself by it"
        PERSONA = "persona", "The agent's persona"
        NAME_PART = "name_part", "Part of the display name"

    project = _owned_by(Project, "speaker_aliases")
    alias = models.CharField(max_length=100, help_text="As people write it.")
    alias_key = models.CharField(max_length=100, help_text="Lowercased, for matching.")
    speaker = models.CharField(
        max_length=200, help_text="The message author (or the agent name) it stands for."
    )
    is_agent = models.BooleanField(default=False, help_text="The speaker is an agent name.")
    source = models.CharField(max_length=16, choices=Source.choices)
    evidence = models.PositiveIntegerField(default=1, help_text="Times it was seen.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "alias_key", "speaker", "is_agent"],
                name="speaker_alias_uniq",
            )
        ]
        indexes = [models.Index(fields=["team", "alias_key"], name="speaker_alias_team_key_idx")]

    def __str__(self) -> str:
        return f"{self.alias} → {self.speaker}"
