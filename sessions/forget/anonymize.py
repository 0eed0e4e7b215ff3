"""Anonymise a session or a whole project: personal data out, structure kept.

People's names become "User-1", "User-2" …, project and team names "Project-A" …, e-mail
addresses "[EMAIL-1]", phone numbers "[PHONE-1]", IP addresses "[IP-1]" (or all "[REMOVED]"
when placeholders are off), and absolute file-system paths "/path/…/<file name>": the file's
base name is kept (it tells which file a message is about), the folders above it, which
name people and machines, go. Which names are known, and how placeholders stay the same
across a project, is ``sessions/forget/placeholders.py``; the e-mail, phone and IP shapes are
``sessions/capture/personal_data.py``, shared with redaction at capture.

Everything a person can see is rewritten: messages (content, author, tool name, metadata),
the session's title, person, summary, topics, artifacts and metadata, and its entities
(value and context). Search follows: the keyword index of a message is generated from its
content, its keyword context is recomputed here, and changed messages lose their vectors and
go back to the embedding queue, the session's summary vector with them.

``anonymize_session(..., dry_run=True)`` computes the same and writes nothing: the preview.
Anonymising twice changes nothing the second time.
"""

from __future__ import annotations

import logging
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.db import connection, transaction
from django.utils import timezone

from sessions import derived
from sessions.capture.keyword_context import index_context
from sessions.capture.personal_data import find_emails, find_ips, find_phones, replace_found
from sessions.embedding.tokens import count_tokens
from sessions.enrich import aliases
from sessions.enrich.pipeline import ENRICH_LOCK_SPACE, embed_followers_again
from sessions.forget.placeholders import (
    Pseudonyms,
    Vocabulary,
    alias_pattern,
    project_vocabulary,
)
from sessions.forget.records import actor_label
from sessions.models import EnrichmentStatus, Entity, Message, MessageChunk, Session
from transcripts.sanitize import clean_json

logger = logging.getLogger(__name__)

KINDS = ("user", "project", "path", "email", "phone", "ip")
DERIVED_KINDS = ("memories", "evidence_quotes", "history_reasons", "diary_entries", "aliases")
EXCERPTS = 5
EXCERPT_CHARS = 80
# One anonymisation per project at a time: placeholders are numbered per project.
PROJECT_LOCK_SPACE = 0x616E6F  # "ano"


@dataclass(frozen=True)
class AnonymizationConfig:
    remove_user_names: bool = True
    remove_project_names: bool = True
    remove_file_paths: bool = True
    remove_emails: bool = True
    remove_phones: bool = True
    remove_ips: bool = True
    # Numbered placeholders, the same within the project ("User-1"); else "[REMOVED]".
    replace_with_placeholders: bool = True
    # Keep timestamps, tool-call links and metadata (anonymised); off: they are cleared.
    preserve_structure: bool = True


# Absolute paths under the usual roots of a file system (home folders, checkouts, temp,
# system folders), "~/…" and Windows drive paths; URL paths ("/api/v1/…") are not files.
_ROOTS = (
    "home|Users|root|tmp|var|opt|srv|mnt|media|private|Volumes|workspace|workspaces|work"
    "|data|usr|etc|app|code|projects|builds|runner|nix|snap"
)
_SEGMENT = r"[\w.@+~-]+"
_PATH = re.compile(
    rf"(?<![\w./~:\\-])(?:(?:/(?:{_ROOTS})|~)(?:/{_SEGMENT})+/?"
    rf"|[A-Za-z]:\\(?:{_SEGMENT}\\)*{_SEGMENT}\\?)"
)


def _anonymous_path(path: str) -> str:
    parts = [p for p in re.split(r"[/\\]", path) if p]
    if path.endswith(("/", "\\")) or len(parts) < 2:
        return "/path/…/"
    return f"/path/…/{parts[-1]}"


@dataclass
class Outcome:
    """What an anonymisation changed (or, as a preview, would change)."""

    dry_run: bool
    sessions: int = 0  # looked at
    sessions_in_scope: int = 0  # a preview of a big project looks at the latest only
    sessions_changed: int = 0
    messages_changed: int = 0
    entities_changed: int = 0
    # What is derived from the sessions, by kind: memories, evidence quotes, diary entries
    # and speaker aliases (sessions/derived.py).
    derived: Counter = field(default_factory=Counter)
    replacements: Counter = field(default_factory=Counter)  # by kind
    mapping: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    excerpts: list[dict] = field(default_factory=list)
    # Messages or summaries wait for the embedding workers: the caller pokes them
    # (``sessions.tasks.poke_enrichment``) once the change is committed.
    left_to_embed: bool = False

    def as_dict(self) -> dict:
        return {
            "dry_run": self.dry_run,
            "sessions": self.sessions,
            "sessions_in_scope": max(self.sessions_in_scope, self.sessions),
            "sessions_changed": self.sessions_changed,
            "messages_changed": self.messages_changed,
            "entities_changed": self.entities_changed,
            "derived_changed": {kind: self.derived.get(kind, 0) for kind in DERIVED_KINDS},
            "replacements": {kind: self.replacements.get(kind, 0) for kind in KINDS},
            "mapping": {label: sorted(found) for label, found in sorted(self.mapping.items())},
            "excerpts": self.excerpts,
        }


class Anonymizer:
    """Rewrites text with one configuration, one vocabulary and one set of placeholders,
    counting what it replaced into ``outcome``."""

    def __init__(self, config, vocabulary: Vocabulary, pseudonyms: Pseudonyms, outcome):
        self.config = config
        self.vocabulary = vocabulary
        self.pseudonyms = pseudonyms
        self.outcome = outcome
        kinds = {"user"} if config.remove_user_names else set()
        kinds |= {"project"} if config.remove_project_names else set()
        self.kinds = kinds
        self.pattern = alias_pattern(a for a in vocabulary.aliases.values() if a.kind in kinds)

    def _label(self, kind: str, identity: str, original: str) -> str:
        label = self.pseudonyms.label(kind, identity)
        self.outcome.replacements[kind] += 1
        self.outcome.mapping[label].add(original)
        return label

    def _shapes(self, text: str, on: bool, find, kind: str) -> str:
        if not on or not text:
            return text
        found = find(text)
        return replace_found(
            text, found, lambda span: self._label(kind, span.value, text[span.start : span.end])
        )

    def _path(self, match: re.Match[str]) -> str:
        self.outcome.replacements["path"] += 1
        return _anonymous_path(match[0])

    def _alias(self, match: re.Match[str]) -> str:
        alias = self.vocabulary.aliases.get(" ".join(match[0].split()).casefold())
        if alias is None or (not alias.any_case and match[0].islower()):
            return match[0]  # "will" is not Will
        return self._label(alias.kind, alias.identity, alias.text)

    def text(self, text: str) -> str:
        if not text:
            return text
        config = self.config
        # E-mail addresses and paths first: names inside them go with them.
        text = self._shapes(text, config.remove_emails, find_emails, "email")
        if config.remove_file_paths and ("/" in text or "\\" in text):
            text = _PATH.sub(self._path, text)
        text = self._shapes(text, config.remove_ips, find_ips, "ip")
        text = self._shapes(text, config.remove_phones, find_phones, "phone")
        if self.pattern is not None:
            text = self.pattern.sub(self._alias, text)
        return text

    def keyword(self, word: str) -> str:
        """A topic or a tag: keywords are written in lower case by design, so one that is a
        whole known name is that name in any case (the tag "kate" is Kate)."""
        alias = self.vocabulary.aliases.get(" ".join(word.split()).casefold())
        if alias is None or alias.kind not in self.kinds:
            return self.text(word)
        return self._label(alias.kind, alias.identity, alias.text)

    def json(self, value):
        return clean_json(value, lambda s: (self.text(s), 0))[0]


def _excerpt(outcome: Outcome, where: str, before: str, after: str) -> None:
    if len(outcome.excerpts) >= EXCERPTS or before == after:
        return
    start = next(i for i, (a, b) in enumerate(zip(before, after + "\0", strict=False)) if a != b)
    start = max(0, start - EXCERPT_CHARS // 2)
    outcome.excerpts.append(
        {
            "where": where,
            "before": before[start : start + EXCERPT_CHARS],
            "after": after[start : start + EXCERPT_CHARS],
        }
    )


def _session_changes(session: Session, anonymizer: Anonymizer) -> dict:
    text, config = anonymizer.text, anonymizer.config
    changes = {
        "title": text(session.title)[:300],
        "user_name": text(session.user_name)[:200],
        "summary": text(session.summary),
        "topics": list(dict.fromkeys(anonymizer.keyword(t)[:64] for t in session.topics)),
        "artifacts": [text(a)[:500] for a in session.artifacts],
        "metadata": _metadata_changes(session.metadata, anonymizer)
        if config.preserve_structure
        else {},
        "delete_reason": text(session.delete_reason)[:500],
    }
    return {name: value for name, value in changes.items() if value != getattr(session, name)}


def _metadata_changes(metadata: dict, anonymizer: Anonymizer) -> dict:
    changed = anonymizer.json(metadata)
    # A learned alias is a name in whatever case it was written ("katherine" for
    # katherine.s): each is rewritten as a keyword, whole.
    rows = (metadata or {}).get(aliases.METADATA_KEY)
    if isinstance(rows, list) and isinstance(changed.get(aliases.METADATA_KEY), list):
        changed[aliases.METADATA_KEY] = [
            [anonymizer.keyword(row[0]), *new[1:]]
            if isinstance(row, list) and row and isinstance(row[0], str)
            else new
            for row, new in zip(rows, changed[aliases.METADATA_KEY], strict=False)
        ]
    return changed


MESSAGE_TEXT_FIELDS = ("content", "author", "tool_name", "removed_by")


def _message_changes(message: Message, anonymizer: Anonymizer) -> dict:
    changes = {
        "content": anonymizer.text(message.content),
        "author": anonymizer.text(message.author)[:200],
        "tool_name": anonymizer.text(message.tool_name)[:200],
        "removed_by": anonymizer.text(message.removed_by)[:200],
    }
    if anonymizer.config.preserve_structure:
        changes["metadata"] = anonymizer.json(message.metadata)
    else:
        changes.update(metadata={}, timestamp=None, tool_call_id="")
    return {name: value for name, value in changes.items() if value != getattr(message, name)}


def _entity_changes(entity: Entity, anonymizer: Anonymizer) -> dict:
    changes = {
        "value": anonymizer.text(entity.value)[:500],
        "normalized": anonymizer.text(entity.normalized)[:500],
        "context": anonymizer.text(entity.context) if anonymizer.config.preserve_structure else "",
    }
    return {name: value for name, value in changes.items() if value != getattr(entity, name)}


@dataclass
class Run:
    """One anonymisation: of a session, or of every session of a project (the project's
    names are read once, placeholders are given out once, the outcome adds up)."""

    config: AnonymizationConfig
    vocabulary: Vocabulary
    pseudonyms: Pseudonyms
    outcome: Outcome


def start_run(project, config: AnonymizationConfig, *, dry_run: bool) -> Run:
    return Run(
        config,
        project_vocabulary(project),
        Pseudonyms(project, numbered=config.replace_with_placeholders),
        Outcome(dry_run=dry_run),
    )


def anonymize_session(session: Session, run: Run, *, by=None) -> Outcome:
    """Anonymise ``session`` (or, when the run is a dry run, find what that would change)."""
    if run.outcome.dry_run:
        _rewrite(session, run, write=False)
        return run.outcome
    before = Counter(run.outcome.replacements)
    with transaction.atomic():
        with connection.cursor() as cursor:
            # Placeholders are numbered per project: one run at a time. Then wait for an
            # enrichment of this session that is under way (it holds this lock while it
            # computes), so it cannot write a summary of the old text after us.
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s, %s)", [PROJECT_LOCK_SPACE, session.project_id]
            )
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [ENRICH_LOCK_SPACE, session.pk])
        # As a purge does: waits for the embedding worker's chunk writes and for captures
        # (they hold the session row KEY SHARE or stronger) and keeps new ones out.
        locked = Session.objects.select_for_update().filter(pk=session.pk).first()
        if locked is None:
            return run.outcome  # purged meanwhile
        locked.project = session.project
        run.pseudonyms.reload()
        _rewrite(locked, run, write=True)
    done = run.outcome.replacements - before
    logger.info(
        "session %s anonymised by %s: %s",
        session.public_id,
        actor_label(by) if by is not None else "a script (no person named)",
        ", ".join(f"{n} {kind}" for kind, n in sorted(done.items())) or "nothing to change",
    )
    return run.outcome


def _rewrite(session: Session, run: Run, *, write: bool) -> None:
    messages = list(Message.objects.of_session(session).order_by("seq"))
    for message in messages:
        run.vocabulary.add_people_in(message.metadata)
    outcome, pseudonyms = run.outcome, run.pseudonyms
    anonymizer = Anonymizer(run.config, run.vocabulary, pseudonyms, outcome)

    session_fields = _session_changes(session, anonymizer)
    for name, value in session_fields.items():
        if isinstance(value, str):
            _excerpt(outcome, f"session {name}", getattr(session, name), value)
    changed_messages, reembed = [], []
    for message in messages:
        fields = _message_changes(message, anonymizer)
        if not fields:
            continue
        _excerpt(
            outcome,
            f"message {message.seq}",
            message.content,
            fields.get("content", message.content),
        )
        for name, value in fields.items():
            setattr(message, name, value)
        changed_messages.append((message, fields))
        # A chunk's text is the message's author, tool name and content.
        if {"content", "author", "tool_name"} & fields.keys() and message.removed_at is None:
            reembed.append(message)
    entities = list(Entity.objects.of_session(session))
    changed_entities = []
    for entity in entities:
        fields = _entity_changes(entity, anonymizer)
        if fields:
            for name, value in fields.items():
                setattr(entity, name, value)
            changed_entities.append(entity)

    outcome.sessions += 1
    outcome.sessions_changed += bool(session_fields or changed_messages or changed_entities)
    outcome.messages_changed += len(changed_messages)
    outcome.entities_changed += len(changed_entities)
    if "metadata" in session_fields:
        outcome.derived["aliases"] += _aliases_changed(session, session_fields["metadata"])
    if not write:
        outcome.derived.update(derived.anonymise(session, anonymizer, write=False))
        return
    if session_fields or changed_messages or changed_entities:
        _write_session(session, run, session_fields, changed_messages, reembed)
        _write_entities(entities, changed_entities)
    # Memories, their quotes and vectors, diary entries: rewritten with the same
    # placeholders (a memory may name the person when the session no longer needs to).
    outcome.derived.update(derived.anonymise(session, anonymizer, write=True))
    pseudonyms.save()


def _aliases_changed(session: Session, metadata: dict) -> int:
    """Speaker aliases the session's contribution changes (the anonymised metadata's)."""
    before = {tuple(row[:2]) for row in session.metadata.get(aliases.METADATA_KEY) or []}
    after = {tuple(row[:2]) for row in (metadata or {}).get(aliases.METADATA_KEY) or []}
    return len(before - after)


def _write_session(
    session: Session, run: Run, session_fields: dict, changed_messages: list, reembed: list
) -> None:
    # The session's contribution to its project's speaker aliases is taken out under its
    # old names and given back under the new ones (from the anonymised metadata). A session
    # in the trash has none in them (withdrawn when it was trashed; restore gives it back).
    counted = session.deleted_at is None
    if counted:
        aliases.withdraw(session)
    _write_messages(session, changed_messages, reembed)
    now = timezone.now()
    updates = {**session_fields, "updated_at": now}
    if reembed or "summary" in session_fields:
        # The summary's vector is made again by the enrichment pipeline.
        updates.update(
            embedding=None, embedding_model="", enrichment_status=EnrichmentStatus.PENDING
        )
    Session.objects.filter(pk=session.pk).update(**updates)
    if counted:
        aliases.give_back(session)
    run.outcome.left_to_embed = run.outcome.left_to_embed or "enrichment_status" in updates


def _write_messages(session: Session, changed: list, reembed: list[Message]) -> None:
    if not changed:
        return
    rows = [message for message, _ in changed]
    old_bytes = {
        m.pk: m for m in Message.objects.filter(pk__in=[m.pk for m in rows]).only("content")
    }
    delta = 0
    for message, tokens in zip(rows, count_tokens([m.content for m in rows]), strict=True):
        delta += len(message.content.encode()) - len(old_bytes[message.pk].content.encode())
        message.token_count = tokens
    names = sorted({name for _, fields in changed for name in fields} | {"token_count"})
    for message in reembed:
        message.enrichment_status = EnrichmentStatus.PENDING
        message.enrichment_attempts = 0
        message.enrichment_error = ""
        message.claimed_by = None  # a batch embedding the old text finds its claim gone
    if reembed:
        names += ["enrichment_status", "enrichment_attempts", "enrichment_error", "claimed_by"]
    update_each(Message, rows, names)
    MessageChunk.objects.filter(message_id__in=[m.pk for m in reembed]).delete()
    # A short message after a rewritten one was embedded with its old words as context.
    embed_followers_again(session.pk, [m.seq for m in reembed])
    index_context(session.pk, 0)
    if delta:
        Session.objects.filter(pk=session.pk).update(size_bytes=max(0, session.size_bytes + delta))


def update_each(model, rows: list, names: list[str]) -> None:
    """Write ``names`` of each of ``rows``: one ``UPDATE … WHERE id = %s`` per row, sent
    together (psycopg's ``executemany`` pipelines them). Django's ``bulk_update`` builds a
    ``CASE WHEN id = … THEN …`` over every row for every field, which took most of a
    project's anonymisation (docs/benchmark-log.md, "Forgetting at scale: the fixes")."""
    if not rows:
        return
    fields = [model._meta.get_field(name) for name in names]
    qn = connection.ops.quote_name
    sql = (
        f"UPDATE {qn(model._meta.db_table)} SET "
        + ", ".join(f"{qn(f.column)} = %s" for f in fields)
        + f" WHERE {qn(model._meta.pk.column)} = %s"
    )
    params = [
        [f.get_db_prep_save(getattr(row, f.attname), connection) for f in fields] + [row.pk]
        for row in rows
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def _write_entities(entities: list[Entity], changed: list[Entity]) -> None:
    """Entities that became the same one ("/home/a/x.py" and "/home/b/x.py" are both
    "/path/…/x.py") are merged: the first keeps the sum of the counts."""
    if not changed:
        return
    keep: dict[tuple[str, str], Entity] = {}
    duplicates = []
    for entity in sorted(entities, key=lambda e: e.pk):
        first = keep.setdefault((entity.type, entity.normalized), entity)
        if first is not entity:
            first.count += entity.count
            duplicates.append(entity.pk)
    Entity.objects.filter(pk__in=duplicates).delete()
    survivors = list(keep.values())
    Entity.objects.bulk_update(
        survivors, ["value", "normalized", "context", "count"], batch_size=500
    )


def config_from(data: dict) -> AnonymizationConfig:
    return AnonymizationConfig(
        **{k: v for k, v in data.items() if k in AnonymizationConfig.__dataclass_fields__}
    )


# A project's preview reads its latest sessions only: enough to show what changes, quick
# enough for a request.
PREVIEW_SESSIONS = 200


def anonymize_project(
    project, config: AnonymizationConfig, *, dry_run: bool, by=None, progress=None
) -> Outcome:
    """Anonymise every session of ``project`` (the trash's too), one transaction each;
    ``progress(done, total)`` after each. The project's names are read once, before any
    session changes, so a name known from one session is replaced in all."""
    run = start_run(project, config, dry_run=dry_run)
    sessions = Session.objects.filter(project=project).select_related("project__team")
    total = run.outcome.sessions_in_scope = sessions.count()
    if dry_run:
        sessions = sessions.order_by("-started_at", "-pk")[:PREVIEW_SESSIONS]
    else:
        sessions = sessions.order_by("pk")
    for done, session in enumerate(sessions.iterator(chunk_size=100), 1):
        anonymize_session(session, run, by=by)
        if progress is not None:
            progress(done, total)
    # What belongs to no session: memories recorded by agents or people, diary entries.
    anonymizer = Anonymizer(run.config, run.vocabulary, run.pseudonyms, run.outcome)
    with transaction.atomic():
        if not dry_run:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_xact_lock(%s, %s)", [PROJECT_LOCK_SPACE, project.pk]
                )
            run.pseudonyms.reload()
        run.outcome.derived.update(derived.anonymise_rest(project, anonymizer, write=not dry_run))
        if not dry_run:
            run.pseudonyms.save()
    return run.outcome
