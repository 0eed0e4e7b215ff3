"""Compaction: make room in a session that nears its quota, keeping what people rely on.

Three steps, in this order, each stopping as soon as enough room is made:

1. **summarise** each run of consecutive turns older than ``SUMMARISE_AFTER`` into one
   system message (the extractive summary of ``sessions/enrich/summary``). The summary takes
   the place (``seq``) and client id of the run's *last* message, so the session's top seq
   never falls; the others are deleted, and the summary's metadata records their seqs,
   client ids and size. A client that re-sends its transcript then neither re-adds them (by
   client id) nor shifts its positions (captures count positions up to the top seq).
2. **fold** large tool outputs: the head and tail stay, the middle becomes a marker.
3. **deduplicate**: a message whose text equals an earlier one's becomes a pointer to it.

Never changed: messages of the last ``KEEP_RECENT``, pinned messages, removed messages
(tombstones) and earlier summaries; and automatic compaction leaves a session alone when it
was read within ``ACCESS_GRACE`` (someone is using it as it is).

The caller holds the session row (``FOR NO KEY UPDATE``, as captures do). The message rows
are locked here, in id order, before anything is read for the plan: an embedding batch that
holds one of them writes its chunks first (and the chunks are then deleted here), or waits
and then finds the message no longer claimed by it and skips it (``sessions/enrich/
pipeline.py`` writes only rows still pending under its own claim). Changed messages go back
to pending embedding with their chunks gone; when changed text had already been summarised
or mined for entities, the session is enriched again from the start.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from sessions.capture.keyword_context import index_context
from sessions.embedding.tokens import count_tokens
from sessions.enrich.pipeline import embed_followers_again
from sessions.enrich.summary import summarize
from sessions.forget.lifecycle import LifecycleConflict
from sessions.models import (
    KEYWORD_VECTORS,
    EnrichmentStatus,
    Entity,
    Message,
    MessageChunk,
    MessageRole,
    Session,
)
from sessions.poke import poke_enrichment

SUMMARISE_AFTER = timedelta(days=7)
KEEP_RECENT = timedelta(hours=24)
ACCESS_GRACE = timedelta(hours=48)
FOLD_OVER_BYTES = 8_192
FOLD_KEEP_CHARS = 1_500  # at the head, and again at the tail
DUPLICATE_MIN_BYTES = 100  # shorter repeats cost less than the pointer is worth
SUMMARY_CHARS = 600

READ_RECENTLY = "it was read in the last 48 hours"

SUMMARISE, FOLD, DEDUPLICATE = "summarise_old_turns", "fold_tool_output", "drop_duplicates"
STEPS = (SUMMARISE, FOLD, DEDUPLICATE)


@dataclass
class StepReport:
    step: str
    messages: int = 0
    bytes_freed: int = 0


@dataclass
class Compaction:
    """What a compaction did (or, for a dry run, would do)."""

    steps: list[StepReport] = field(default_factory=lambda: [StepReport(s) for s in STEPS])
    skipped: str = ""  # why the session was left alone
    messages_removed: int = 0

    @property
    def bytes_freed(self) -> int:
        return sum(step.bytes_freed for step in self.steps)


def nbytes(text: str) -> int:
    return len(text.encode())


def recently_read(session: Session, now) -> bool:
    return session.last_accessed_at is not None and now - session.last_accessed_at < ACCESS_GRACE


def has_compactable_messages(session: Session, now=None) -> bool:
    """Whether any message is old enough and not kept (a cheap check before the real read)."""
    now = now or timezone.now()
    candidates = _compactable(Message.objects.of_session(session), now - KEEP_RECENT)
    return candidates.exclude(metadata__has_key="compaction").exists()


def compact_session(
    session: Session,
    *,
    goal_bytes: int | None = None,
    dry_run: bool = False,
    respect_access: bool = True,
    now=None,
) -> Compaction:
    """Free at least ``goal_bytes`` (None: all that can be freed) of ``session``'s messages.

    Inside the caller's transaction, with the session row locked (not needed for a dry
    run). ``respect_access``: leave a session read within ``ACCESS_GRACE`` alone (automatic
    compaction; a person asking for it explicitly does not wait)."""
    now = now or timezone.now()
    if respect_access and recently_read(session, now):
        return Compaction(skipped=READ_RECENTLY)
    rows = Message.objects.of_session(session).defer(*KEYWORD_VECTORS)
    if not dry_run:
        rows = rows.select_for_update(of=("self",)).order_by("id")
    messages = sorted(rows, key=lambda m: m.seq)
    plan = _Plan(messages, now=now, goal=goal_bytes)
    plan.run()
    if not dry_run and plan.changed:
        _write(session, plan)
    return plan.report


def compact_on_request(session: Session, *, dry_run: bool = False) -> Compaction:
    """A person's or agent's explicit request: everything that may be compacted is (the
    48-hour read rule guards automatic compaction only: the caller is reading it now)."""
    with transaction.atomic():
        locked = Session.objects.select_for_update(no_key=True).get(pk=session.pk)
        if locked.deleted_at is not None:
            raise LifecycleConflict(
                f"session {locked.public_id} is in the trash; restore it before compacting it"
            )
        result = compact_session(locked, dry_run=dry_run, respect_access=False)
        if result.bytes_freed and not dry_run:
            transaction.on_commit(poke_enrichment)
    session.refresh_from_db(fields=["message_count", "size_bytes", "enrichment_status"])
    return result


def set_pinned(session: Session, seq: int, pinned: bool | None) -> Message:
    """Pin (keep from compaction) or unpin message ``seq`` (None: leave it); raises
    ``Message.DoesNotExist`` if the session has none, ``LifecycleConflict`` if it was
    removed."""
    message = Message.objects.of_session(session).defer(*KEYWORD_VECTORS)
    message = message.get(seq=seq)
    if message.removed_at is not None:
        raise LifecycleConflict(f"message #{seq} was removed; there is nothing to pin")
    if pinned is not None and pinned != message.pinned:
        Message.objects.filter(pk=message.pk).update(pinned=pinned)
        message.pinned = pinned
    return message


# ---------------------------------------------------------------------------------------


def _compactable(queryset, before):
    """Messages compaction may change: neither pinned, nor removed, nor newer than
    ``before`` (their own time when the client gave one, else when they were stored)."""
    return (
        queryset.filter(pinned=False, removed_at__isnull=True)
        .exclude(timestamp__gte=before)
        .exclude(timestamp__isnull=True, created_at__gte=before)
    )


def _is_summary(message: Message) -> bool:
    return (message.metadata or {}).get("compaction", {}).get("step") == SUMMARISE


class _Plan:
    """The three steps over the session's messages (in seq order), in memory."""

    def __init__(self, messages: list[Message], *, now, goal: int | None):
        self.messages = messages
        self.now = now
        self.goal = goal
        self.report = Compaction()
        self.content: dict[int, str] = {}  # message id → its new text
        self.changed: dict[int, Message] = {}
        self.deleted: list[Message] = []

    def run(self) -> None:
        actions = (self._summarise, self._fold, self._deduplicate)
        for action, report in zip(actions, self.report.steps, strict=True):
            if self._done():
                return
            action(report)

    def _done(self) -> bool:
        return self.goal is not None and self.report.bytes_freed >= self.goal

    def _may_change(self, message: Message, *, older_than) -> bool:
        when = message.timestamp or message.created_at
        return (
            not message.pinned
            and message.removed_at is None
            and not _is_summary(message)
            and when < self.now - older_than
        )

    def _text(self, message: Message) -> str:
        return self.content.get(message.id, message.content)

    def _change(self, message: Message, text: str, report: StepReport, **compaction) -> None:
        report.bytes_freed += nbytes(self._text(message)) - nbytes(text)
        report.messages += 1
        self.content[message.id] = text
        message.metadata = {**(message.metadata or {}), "compaction": compaction}
        self.changed[message.id] = message

    def _runs(self):
        run: list[Message] = []
        for message in self.messages:
            if self._may_change(message, older_than=SUMMARISE_AFTER):
                run.append(message)
            elif run:
                yield run
                run = []
        if run:
            yield run

    def _summarise(self, report: StepReport) -> None:
        for run in list(self._runs()):
            if self._done():
                break
            first, last = run[0], run[-1]
            before = sum(nbytes(m.content) for m in run)
            summary = summarize(run, max_chars=SUMMARY_CHARS) or "(no text)"
            text = (
                f"[Summary of {len(run)} earlier message{'s' if len(run) > 1 else ''} "
                f"(#{first.seq}–#{last.seq}), compacted to make room] {summary}"
            )
            if nbytes(text) >= before:
                continue
            self._change(
                last,
                text,
                report,
                step=SUMMARISE,
                seqs=[m.seq for m in run],
                client_ids=[m.client_id for m in run if m.client_id],
                messages=len(run),
                bytes=before,
                at=self.now.isoformat(),
            )
            report.bytes_freed += sum(nbytes(m.content) for m in run[:-1])
            report.messages += len(run) - 1
            last.role, last.tool_name, last.tool_call_id, last.author = "system", "", "", ""
            last.timestamp = first.timestamp or last.timestamp  # the run starts its age
            self.deleted.extend(run[:-1])
            self.report.messages_removed += len(run) - 1
        gone = {m.id for m in self.deleted}
        self.messages = [m for m in self.messages if m.id not in gone]

    def _fold(self, report: StepReport) -> None:
        for message in self.messages:
            if self._done():
                return
            text = self._text(message)
            if (
                message.role != MessageRole.TOOL
                or nbytes(text) <= FOLD_OVER_BYTES
                or not self._may_change(message, older_than=KEEP_RECENT)
            ):
                continue
            head, middle, tail = (
                text[:FOLD_KEEP_CHARS],
                text[FOLD_KEEP_CHARS:-FOLD_KEEP_CHARS],
                text[-FOLD_KEEP_CHARS:],
            )
            folded = f"{head}\n[… {nbytes(middle):,} bytes folded …]\n{tail}"
            self._change(message, folded, report, step=FOLD, bytes=nbytes(text))

    def _deduplicate(self, report: StepReport) -> None:
        first_seen: dict[bytes, int] = {}
        for message in self.messages:
            if self._done():
                return
            text = self._text(message)
            if message.removed_at is not None or not text:
                continue
            key = hashlib.sha256(text.encode()).digest()
            earlier = first_seen.setdefault(key, message.seq)
            if (
                earlier != message.seq
                and nbytes(text) >= DUPLICATE_MIN_BYTES
                and self._may_change(message, older_than=KEEP_RECENT)
            ):
                pointer = f"[same as message #{earlier}]"
                self._change(message, pointer, report, step=DEDUPLICATE, same_as=earlier)

    @property
    def touched_text(self) -> list[Message]:
        """Messages whose words are gone (summarised or folded), not merely repeated."""
        return [
            m
            for m in [*self.changed.values(), *self.deleted]
            if m.metadata.get("compaction", {}).get("step") != DEDUPLICATE
        ]


def _write(session: Session, plan: _Plan) -> None:
    changed = list(plan.changed.values())
    for message, tokens in zip(
        changed, count_tokens([plan.content[m.id] for m in changed]), strict=True
    ):
        message.content = plan.content[message.id]
        message.token_count = tokens
        message.enrichment_status = EnrichmentStatus.PENDING
        message.enrichment_error, message.enrichment_attempts = "", 0
        message.claimed_by = None
    Message.objects.bulk_update(
        changed,
        [
            "content",
            "timestamp",
            "role",
            "author",
            "tool_name",
            "tool_call_id",
            "metadata",
            "token_count",
            "enrichment_status",
            "enrichment_error",
            "enrichment_attempts",
            "claimed_by",
        ],
        batch_size=500,
    )
    gone = [m.id for m in plan.deleted]
    MessageChunk.objects.filter(message_id__in=[*plan.changed, *gone]).delete()
    Message.objects.filter(id__in=gone).delete()
    index_context(session.pk, min(m.seq for m in [*changed, *plan.deleted]))
    # A short message after one changed or gone was embedded with its old words as context.
    embed_followers_again(session.pk, [m.seq for m in [*changed, *plan.deleted]])

    updates = {
        "message_count": F("message_count") - len(gone),
        "size_bytes": F("size_bytes") - plan.report.bytes_freed,
        "enrichment_status": EnrichmentStatus.PENDING,
        "updated_at": timezone.now(),
    }
    if any(m.seq <= session.enriched_through_seq for m in plan.touched_text):
        # The summary and entities were made from text that is gone: made again, from the
        # compacted transcript (the old summary shows until then).
        Entity.objects.of_session(session).delete()
        updates["enriched_through_seq"] = -1
    Session.objects.filter(pk=session.pk).update(**updates)
    session.refresh_from_db(
        fields=["message_count", "size_bytes", "enrichment_status", "enriched_through_seq"]
    )
