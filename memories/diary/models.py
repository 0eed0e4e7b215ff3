"""A diary entry: what one person did with one character on one day (docs/people.md's
``diary/<person_id>/<char_id>/YYYY-MM-DD.md``).

The character ``_shared`` holds what every character of the person may read: the day's
memories marked shared (docs/people.md, "Memories: own or shared").

One row per project, person, character, day and audience (a unique constraint; the team's
entry has no owner, a private one is its owner's: docs/visibility.md): distillation writes
it by ``INSERT … ON CONFLICT DO UPDATE``, so re-running a day updates it and two runs at
once cannot make two.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from pgvector.django import VectorField

# The one definition of an embedding column's HNSW index (cosine, default build parameters).
from sessions.models import EMBEDDING_DIMENSIONS, SEARCH_CONFIG, _embedding_index
from teams.models import Project, Team, Visibility, user_or_null

SHARED = "_shared"  # the character whose entries every character of the person reads


class DiaryEntry(models.Model):
    VISIBILITY_PATH = ""  # its own owner and visibility (teams.access.Access.readable)

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+", db_index=False)
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="diary_entries", db_index=False
    )
    person = models.CharField(max_length=200, help_text="The session's user_name.")
    character = models.CharField(
        max_length=64, help_text=f"The session's agent_name, or {SHARED} for every character."
    )
    day = models.DateField(help_text="The day (UTC) it is about.")
    # Who reads it (docs/visibility.md): the team ('team', from sessions the team reads), or
    # only its owner ('private', distilled from that person's private sessions).
    owner = user_or_null()
    visibility = models.CharField(
        max_length=8, choices=Visibility.choices, db_default=Visibility.TEAM
    )
    happened = models.TextField(blank=True, help_text="What happened, one line per session.")
    decisions = ArrayField(models.TextField(), default=list, blank=True)
    preferences = ArrayField(models.TextField(), default=list, blank=True)
    open_threads = ArrayField(models.TextField(), default=list, blank=True)
    facts = ArrayField(models.TextField(), default=list, blank=True)
    sessions = ArrayField(
        models.CharField(max_length=100), default=list, blank=True, help_text="Public ids."
    )
    text = models.TextField(help_text="The entry as Markdown (what is searched and exported).")
    method = models.CharField(max_length=10, default="offline", help_text="offline or llm")
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    search_vector = models.GeneratedField(
        expression=SearchVector("text", config=SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["person", "-day", "character"]
        verbose_name_plural = "diary entries"
        constraints = [
            # One entry per audience too: the team's (no owner) and each owner's private one.
            models.UniqueConstraint(
                fields=["project", "person", "character", "day", "owner"],
                name="diary_entry_uniq",
                nulls_distinct=False,
            ),
        ]
        indexes = [
            models.Index(fields=["team", "person", "-day"], name="diary_person_day_idx"),
            GinIndex(fields=["search_vector"], name="diary_search_gin"),
            # Erasure finds the entries that list a session (``sessions && ARRAY[...]``).
            GinIndex(fields=["sessions"], name="diary_sessions_gin"),
            _embedding_index("diary_embedding_hnsw"),
        ]

    def __str__(self) -> str:
        return f"{self.person}/{self.character}/{self.day:%Y-%m-%d}"


class DiaryDue(models.Model):
    """A team's day whose diary must be distilled again: its material changed (a late or
    imported session, a trash, restore or purge, a removed message, an anonymisation, a
    memory recorded or deleted). The beat task distils every marked day and unmarks it
    (``memories/diary/due.py``); marking twice is one row."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+", db_index=False)
    day = models.DateField()
    marked_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team", "day"], name="diary_due_uniq")]

    def __str__(self) -> str:
        return f"diary of team {self.team_id} on {self.day:%Y-%m-%d} due"
