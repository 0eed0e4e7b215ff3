"""Tenancy: teams, their members (with roles), their projects, and project API tokens.

Team → Membership (role) → Project → sessions. Every other row in the product carries its
team, and every query a caller makes goes through ``teams.access.Access.scope``, so another
team's object is never found: the API and the UI answer 404, never 403.
"""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.text import slugify

from protocol.directories import project_slug

DEFAULT_SESSION_QUOTA_BYTES = 10 * 1024 * 1024  # docs/api.md, session quotas
DEFAULT_TRASH_DAYS = 30  # in the trash before the purge (docs/operations.md)
# docs/operations.md: a session unread for this long becomes idle, then decaying, then archived.
DEFAULT_IDLE_AFTER_HOURS = 24
DEFAULT_DECAYING_AFTER_DAYS = 7
DEFAULT_ARCHIVE_AFTER_DAYS = 30
# docs/api.md, session quotas: warn at 80 % of the quota, compact at 95 %.
DEFAULT_QUOTA_WARN_PERCENT = 80
DEFAULT_QUOTA_COMPACT_PERCENT = 95
# Extracted memories less confident than this wait for review (memories/capture/review.py).
DEFAULT_MEMORY_REVIEW_THRESHOLD = 0.5
# The longest working-directory slug a project keeps (longer paths are refused, by name).
DIRECTORY_MAX_LENGTH = 1000


def user_or_null() -> models.ForeignKey:
    """A reference to the user who did something (created a token, deleted a session): NULL
    once that user is deleted, with no reverse accessor and no index of its own."""
    return models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    ADMIN = "admin", "Admin"
    MEMBER = "member", "Member"
    VIEWER = "viewer", "Viewer"


# What each role may do; a role includes everything below it.
ROLE_RANK = {Role.VIEWER: 0, Role.MEMBER: 1, Role.ADMIN: 2, Role.OWNER: 3}


class QuotaAction(models.TextChoices):
    """What a capture that would take a session past its quota does."""

    COMPACT = "compact", "Compact the session, refuse only if that cannot make room"
    REFUSE = "refuse", "Refuse the capture"


class Visibility(models.TextChoices):
    """Who reads a session and what is derived from it (docs/visibility.md). The owner
    always reads all of it; the team's admins always see that a session exists."""

    PRIVATE = "private", "Private: only its owner reads it"
    SUMMARY = "summary", "Summary: the team reads its title, summary, topics and accepted memories"
    TEAM = "team", "Team: the whole team reads it"


# From least to most visible: making something "more visible" moves up this order.
VISIBILITY_RANK = {Visibility.PRIVATE: 0, Visibility.SUMMARY: 1, Visibility.TEAM: 2}


def all_visibilities() -> list[str]:
    return list(Visibility.values)


class TokenPermission(models.TextChoices):
    """What an API token may do; a person's role decides it for people."""

    READ = "read", "Read (list, search, context, export)"
    WRITE = "write", "Write (capture, append, import, edit)"
    DELETE = "delete", "Delete (trash, restore, purge, delete messages)"
    # A team-level token's: the project of a new working directory is made on first use.
    PROJECTS = "projects", "Projects (create the project of a new working directory)"


def default_token_permissions() -> list[str]:
    # What every token could do before permissions existed: a member's rights.
    return [TokenPermission.READ, TokenPermission.WRITE]


def parse_token_permissions(text: str) -> list[str]:
    """``"read,write"`` → the permissions in their usual order; ValueError names a wrong
    or missing one."""
    given = {part.strip().lower() for part in text.split(",")} - {""}
    unknown = sorted(given - set(TokenPermission.values))
    if unknown:
        raise ValueError(
            f"unknown permission(s) {', '.join(unknown)}; "
            f"choose from {', '.join(TokenPermission.values)}"
        )
    if not given:
        raise ValueError(f"give at least one permission of {', '.join(TokenPermission.values)}")
    return [p for p in TokenPermission.values if p in given]


class Team(models.Model):
    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, db_index=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["slug"], name="team_slug_uniq")]

    def __str__(self) -> str:
        return self.name

    def role_of(self, user) -> str | None:
        if not user.is_authenticated:
            return None
        membership = self.memberships.filter(user=user).only("role").first()
        return membership.role if membership else None


class Membership(models.Model):
    # Foreign keys get explicitly named indexes below (db_index=False avoids unnamed ones).
    team = models.ForeignKey(
        Team, on_delete=models.CASCADE, related_name="memberships", db_index=False
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="memberships",
        db_index=False,
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["team", "user"], name="membership_team_user_uniq"),
        ]
        indexes = [models.Index(fields=["user"], name="membership_user_idx")]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"

    def allows(self, role: str) -> bool:
        return ROLE_RANK[Role(self.role)] >= ROLE_RANK[Role(role)]


class Project(models.Model):
    """A team's project: the scope of sessions and of API tokens (docs/api.md)."""

    team = models.ForeignKey(
        Team, on_delete=models.CASCADE, related_name="projects", db_index=False
    )
    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, db_index=False)
    description = models.TextField(blank=True)
    # Policy, set by admins (docs/configuration.md, "Per project, in the admin").
    session_quota_bytes = models.PositiveBigIntegerField(
        default=DEFAULT_SESSION_QUOTA_BYTES,
        validators=[MinValueValidator(1024)],
        help_text="Largest a session of this project may grow, in bytes (10 MB by default). "
        "Captures and appends are measured against it; the percentages and the action below "
        "say what happens as a session nears it.",
    )
    retention_days = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="The daily retention run (04:30 UTC) moves to the trash every session whose "
        "last activity is more than this many days ago: the later of its end (or, without "
        "one, its start) and the last time messages were added to it, it was edited or "
        "restored from the trash. "
        "Reading a session does not keep it. In the trash it can be restored until the trash "
        "period ends, then it is purged for good. Empty keeps sessions forever.",
    )
    trash_days = models.PositiveIntegerField(
        default=DEFAULT_TRASH_DAYS,
        validators=[MinValueValidator(1)],
        help_text="How many days a deleted session (by a person, an agent or the retention "
        "run) can be restored from the trash. The daily purge (05:00 UTC) then deletes it for "
        "good, with its messages, vectors and entities; its deletion record stays.",
    )
    idle_after_hours = models.PositiveIntegerField(
        default=DEFAULT_IDLE_AFTER_HOURS,
        validators=[MinValueValidator(1)],
        help_text="A session nobody read or added messages to for this many hours becomes "
        "idle. Any read or new message makes it active again.",
    )
    decaying_after_days = models.PositiveIntegerField(
        default=DEFAULT_DECAYING_AFTER_DAYS,
        validators=[MinValueValidator(1)],
        help_text="… and decaying after this many days: it ranks lower in searches and "
        "context across sessions.",
    )
    archive_after_days = models.PositiveIntegerField(
        default=DEFAULT_ARCHIVE_AFTER_DAYS,
        validators=[MinValueValidator(1)],
        help_text="… and archived after this many days: its summary, entities and session "
        "vector stay searchable, its message vectors are dropped, and opening or restoring "
        "it brings it back in full.",
    )
    quota_warn_percent = models.PositiveSmallIntegerField(
        default=DEFAULT_QUOTA_WARN_PERCENT,
        validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text="A capture or append that takes a session past this share of its quota "
        "still succeeds, with a warning (a response header and field, and a badge on the "
        "session page).",
    )
    quota_compact_percent = models.PositiveSmallIntegerField(
        default=DEFAULT_QUOTA_COMPACT_PERCENT,
        validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text="With the action 'compact', a capture or append that would take a session "
        "past this share of its quota compacts it first: turns older than 7 days are "
        "summarised into one message, large tool outputs folded and duplicate content "
        "dropped. The last 24 hours, pinned messages and anything read in the last 48 hours "
        "are never touched.",
    )
    quota_action = models.CharField(
        max_length=10,
        choices=QuotaAction.choices,
        default=QuotaAction.COMPACT,
        help_text="What a capture that would pass the quota does: 'compact' compacts the "
        "session and refuses only when that cannot make room; 'refuse' refuses it at once. A "
        "refused capture stores nothing.",
    )
    redact_secrets = models.BooleanField(
        default=True,
        help_text="Replace API keys, tokens, passwords and private keys with [REDACTED:…] "
        "before messages are stored. Messages stored before the switch stay as they are.",
    )
    redact_emails = models.BooleanField(
        default=False,
        help_text="Replace e-mail addresses with [REDACTED:…] before messages are stored.",
    )
    redact_phones = models.BooleanField(
        default=False,
        help_text="Replace phone numbers with [REDACTED:…] before messages are stored.",
    )
    memory_review_threshold = models.FloatField(
        default=DEFAULT_MEMORY_REVIEW_THRESHOLD,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Memories the extractor finds with a confidence below this (0..1) wait in "
        "the review queue as proposals instead of being used at once. Confidence labels "
        "count as: high and explicit 0.9, medium 0.7, unstated 0.5, low and inferred 0.4, "
        "uncertain 0.2. 0 uses every extracted memory at once; 1 reviews them all. "
        "Memories recorded on purpose by a person or an agent are always used at once.",
    )
    default_visibility = models.CharField(
        max_length=8,
        choices=Visibility.choices,
        default=Visibility.TEAM,
        help_text="Who reads a new session of this project unless its capture or its token "
        "asks otherwise: 'private' (its owner only; admins see that it exists), 'summary' "
        "(the team reads its title, summary, topics and accepted memories) or 'team'. "
        "A session captured by a token that acts for no person belongs to the team and "
        "cannot be private: 'private' makes it 'summary'.",
    )
    allowed_visibilities = ArrayField(
        models.CharField(max_length=8, choices=Visibility.choices),
        default=all_visibilities,
        help_text="The visibilities a session of this project may have (a capture, a token or "
        "a person asking for another is refused). Must include the default.",
    )
    directory = models.CharField(
        max_length=DIRECTORY_MAX_LENGTH,
        blank=True,
        help_text="The working directory this project stands for, as seed 004's slug "
        "(/home/user/repos/myapp → -home-user-repos-myapp). Agents and the memoryapp command "
        "send theirs; a team-level token finds its project by it (and, with the 'projects' "
        "permission, creates it on first use). Empty: found by its name only.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["team__name", "name"]
        constraints = [
            models.UniqueConstraint(fields=["team", "slug"], name="project_team_slug_uniq"),
            # One project per working directory in a team: concurrent first uses of a
            # directory end with one project (the loser of the insert finds the winner's).
            models.UniqueConstraint(
                fields=["team", "directory"],
                condition=~models.Q(directory=""),
                name="project_team_directory_uniq",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.team.slug}/{self.slug}"

    def save(self, *args, **kwargs):
        if not self.slug:
            self.slug = slugify(self.name)[:100] or "project"
        super().save(*args, **kwargs)

    def clean(self):
        super().clean()
        if self.directory.strip():
            # Typed as a path or as its slug, kept as the slug agents send.
            self.directory = project_slug(self.directory.strip())
        idle_days = (self.idle_after_hours or 0) / 24
        if not idle_days < (self.decaying_after_days or 0) < (self.archive_after_days or 0):
            raise ValidationError(
                "Lifecycle thresholds must grow: idle (in hours) before decaying before archived."
            )
        if (self.quota_warn_percent or 0) > (self.quota_compact_percent or 0):
            raise ValidationError(
                {"quota_warn_percent": "The warning must come at or before compaction."}
            )
        if self.default_visibility not in (self.allowed_visibilities or []):
            raise ValidationError(
                {"default_visibility": "The default visibility must be one of the allowed ones."}
            )


TOKEN_PREFIX = "mem_"


def hash_token(raw: str) -> str:
    # Tokens are 256-bit random strings, so a fast hash is enough (as healthchecks does):
    # there is nothing to brute-force, and lookups stay one indexed equality.
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiTokenQuerySet(models.QuerySet):
    def active(self):
        return self.filter(revoked_at__isnull=True)


class ApiToken(models.Model):
    """A bearer token for agents. Only its hash is stored; it is shown once. A project token
    works in its project only; a team-level token (no project) in every project of its
    team, the one a request names (``teams.viewsets.ScopedMixin.named_project``)."""

    team = models.ForeignKey(
        Team, on_delete=models.CASCADE, related_name="api_tokens", db_index=False
    )
    project = models.ForeignKey(
        Project,
        on_delete=models.CASCADE,
        related_name="api_tokens",
        db_index=False,
        null=True,
        blank=True,
        help_text="Empty: a team-level token, for every project of the team.",
    )
    name = models.CharField(max_length=100, blank=True)
    permissions = ArrayField(
        models.CharField(max_length=10, choices=TokenPermission.choices),
        default=default_token_permissions,
        help_text="What the token may do: read, write, delete, projects (a team-level "
        "token: create the project of a new working directory).",
    )
    prefix = models.CharField(max_length=16, help_text="The visible start of the token.")
    token_hash = models.CharField(max_length=64)
    created_by = user_or_null()
    person = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,
        help_text="The person this token acts for: its sessions are theirs, and it reads "
        "their private sessions. Empty: a team token, whose sessions belong to the team.",
    )
    default_visibility = models.CharField(
        max_length=8,
        choices=Visibility.choices,
        blank=True,
        help_text="Visibility of the sessions this token captures when a capture does not "
        "say. Empty: the project's default.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["token_hash"], name="apitoken_hash_uniq")]
        indexes = [
            models.Index(fields=["project", "revoked_at"], name="apitoken_project_idx"),
            models.Index(fields=["team"], name="apitoken_team_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name or 'unnamed'})"

    @classmethod
    def issue(
        cls,
        project: Project | None,
        *,
        team: Team | None = None,
        name: str = "",
        created_by=None,
        permissions=None,
        person=None,
        default_visibility: str = "",
    ) -> tuple[ApiToken, str]:
        """Create a token for ``project``, or a team-level one for ``team`` (project None),
        with ``permissions``, else read and write; returns the row and the raw token, which
        is never stored. It acts for ``person`` (a member of the team), or for nobody."""
        if (project is None) == (team is None):
            raise ValueError("give a project, or a team (for a team-level token), not both")
        raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
        token = cls.objects.create(
            team=team or project.team,
            project=project,
            name=name,
            permissions=list(permissions or default_token_permissions()),
            prefix=raw[: len(TOKEN_PREFIX) + 8],
            token_hash=hash_token(raw),
            created_by=created_by,
            person=person,
            default_visibility=default_visibility,
        )
        return token, raw

    @property
    def is_team_level(self) -> bool:
        return self.project_id is None

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def revoke(self) -> bool:
        """Revoke once; True when this call revoked it (conditional update, no race)."""
        changed = ApiToken.objects.filter(pk=self.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
        if changed:
            self.refresh_from_db(fields=["revoked_at"])
        return bool(changed)
