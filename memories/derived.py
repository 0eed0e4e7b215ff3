"""Memories and diaries follow their sessions when they are forgotten
(``sessions/derived.py`` calls these hooks inside the erasure's transaction).

- Trash: a trashed session's memories are hidden by ``MemoryQuerySet.live`` (they come back
  on restore); the diary entries that list it are deleted now and their days marked due,
  so the day is distilled again without it (and again with it after a restore).
- Purge: memories of the session go with its row (a cascade), and so do evidence rows in
  it; an extracted memory read in part from it goes too, and the other sessions it was
  read from are read again (``_read_again``). Memories written by agents or people keep
  their own words and lose the evidence.
- A removed message: its evidence and quotes go; extracted memories read from it go, and
  what else they were read from is read again.
- A new owner or visibility: the session's memories take it; its diary entries are deleted
  and their days marked due, so they are written again for their new audience.
- Anonymisation: the memories of the session, and those with evidence in it, are rewritten
  with the session's anonymizer (content, details, person, agent, topic, tags, quotes, and
  the reasons of their history, which may quote them or name people) and
  embedded again from the new text; the session's diary entries are deleted and their days
  marked due. After a whole project, its memories of no session and its diary entries that
  still name its people get the same.
"""

from __future__ import annotations

from collections import Counter

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memories.diary import due
from memories.diary.models import DiaryEntry
from memories.models import Memory, MemoryEvent, MemoryEvidence, MemoryExtraction, Origin
from memories.poke import poke_extraction
from sessions.derived import Derived
from sessions.models import EnrichmentStatus


def _public_ids(session_ids: list[int]) -> list[str]:
    from sessions.models import Session

    return list(Session.objects.filter(pk__in=session_ids).values_list("public_id", flat=True))


def _read_again(memory_ids, *, erased_sessions=()) -> int:
    """Extracted memories that lost evidence are readings of erased text: their content,
    details and vector may quote it, even when another message said the same (a restatement
    was merged into them). They go, and the sessions of their remaining evidence are read
    again from their first message (a replay: what is still recorded is not duplicated),
    so what those messages say comes back in their own words. Returns how many went."""
    lost = Memory.objects.filter(pk__in=list(memory_ids), origin=Origin.EXTRACTOR)
    pks = list(lost.values_list("pk", flat=True))
    if not pks:
        return 0
    again = set(
        MemoryEvidence.objects.filter(memory_id__in=pks)
        .exclude(session_id__in=list(erased_sessions))
        .values_list("session_id", flat=True)
    )
    due.mark_memories(Memory.objects.filter(pk__in=pks).only("team_id", "occurred_at", "session"))
    gone = Memory.objects.filter(pk__in=pks).delete()[1].get("memories.Memory", 0)
    if again:
        MemoryExtraction.objects.filter(session_id__in=again).update(
            status=EnrichmentStatus.PENDING,
            through_seq=-1,
            attempts=0,
            error="",
            updated_at=timezone.now(),
        )
        transaction.on_commit(poke_extraction)
    return gone


def _forget_diaries(session_ids: list[int]) -> Counter:
    pairs = due.forget_entries(session_public_ids=_public_ids(session_ids))
    due.mark_sessions(session_ids)
    return Counter(diary_days=len(pairs))


class MemoriesDerived(Derived):
    def trashed(self, session_ids):
        return _forget_diaries(session_ids)

    def restored(self, session_ids):
        return Counter(diary_days=due.mark_sessions(session_ids))

    def purging(self, session_ids):
        counts = _forget_diaries(session_ids)
        # Extracted memories read (in part) from these sessions, wherever they belong: the
        # rest of them is read again. Memories of these sessions go with their rows.
        read_from = MemoryEvidence.objects.filter(session_id__in=session_ids)
        memory_ids = set(read_from.values_list("memory_id", flat=True))
        memory_ids |= set(
            Memory.objects.filter(session_id__in=session_ids).values_list("pk", flat=True)
        )
        counts["memories"] += _read_again(memory_ids, erased_sessions=session_ids)
        read_from.delete()
        counts["memories"] += Memory.objects.filter(session_id__in=session_ids).count()
        return counts

    def message_removed(self, session, message):
        evidence = MemoryEvidence.objects.filter(message_id=message.pk)
        memory_ids = set(evidence.values_list("memory_id", flat=True))
        evidence.delete()
        counts = _forget_diaries([session.pk])
        counts["memories"] += _read_again(memory_ids)
        return counts

    def anonymise(self, session, anonymizer, *, write):
        # The memories of the session and those with evidence in it, found by two index
        # lookups: one condition over a join of the two tables read both whole, for each
        # session (docs/benchmark-log.md, "Forgetting at scale: the fixes").
        ids = set(Memory.objects.filter(session_id=session.pk).values_list("pk", flat=True))
        ids |= set(
            MemoryEvidence.objects.filter(session_id=session.pk).values_list("memory_id", flat=True)
        )
        memories = Memory.objects.filter(pk__in=ids)
        counts = _anonymise_memories(memories, anonymizer, write=write)
        quotes = MemoryEvidence.objects.filter(Q(session_id=session.pk) | Q(memory_id__in=ids))
        counts += _anonymise_quotes(quotes, anonymizer, write=write)
        counts += _anonymise_history(
            MemoryEvent.objects.filter(memory_id__in=ids), anonymizer, write=write
        )
        entries = DiaryEntry.objects.filter(sessions__overlap=[session.public_id])
        counts["diary_entries"] += entries.count()
        if write:
            _forget_diaries([session.pk])
        return counts

    def anonymise_rest(self, project, anonymizer, *, write):
        memories = Memory.objects.filter(project=project, session__isnull=True)
        counts = _anonymise_memories(memories, anonymizer, write=write)
        counts += _anonymise_quotes(
            MemoryEvidence.objects.filter(memory__in=memories), anonymizer, write=write
        )
        counts += _anonymise_history(
            MemoryEvent.objects.filter(memory__in=memories), anonymizer, write=write
        )
        stale = []
        for pk, person, text in DiaryEntry.objects.filter(project=project).values_list(
            "pk", "person", "text"
        ):
            if anonymizer.text(person) != person or anonymizer.text(text) != text:
                stale.append(pk)
        counts["diary_entries"] += len(stale)
        if write and stale:
            entries = DiaryEntry.objects.filter(pk__in=stale)
            due.mark(entries.values_list("team_id", "day").distinct())
            entries.delete()
        return counts

    def captured(self, sessions):
        return Counter(diary_days=due.mark_late(sessions))

    def purge_expired(self, now):
        from memories.forget import trash

        return Counter(memories=trash.purge_expired(now))

    def visibility_changed(self, session_ids):
        # Its memories are read as the session is (memories/visibility.py); the entries that
        # list it were written for its old audience: they go now, in the change's
        # transaction, and their days are distilled again for the new one.
        from memories import visibility

        return visibility.follow_sessions(session_ids) + _forget_diaries(session_ids)


MEMORY_TEXT = ("content", "person", "agent", "topic")


def _anonymise_memories(memories, anonymizer, *, write: bool) -> Counter:
    from memories.capture.record import fingerprint
    from sessions.embedding.query import embed_queries
    from sessions.forget.anonymize import update_each

    changed = []
    for memory in memories.defer("embedding").order_by("pk"):
        before = {
            name: getattr(memory, name) for name in (*MEMORY_TEXT, "details", "tags", "files")
        }
        memory.content = anonymizer.text(memory.content)
        memory.person = anonymizer.text(memory.person)[:200]
        memory.agent = anonymizer.text(memory.agent)[:64]
        memory.topic = anonymizer.text(memory.topic)[:100]
        memory.details = anonymizer.json(memory.details)
        memory.tags = list(dict.fromkeys(anonymizer.keyword(t)[:64] for t in memory.tags))
        # The files it is about (staleness keys) may hold a person's home folder.
        memory.files = list(dict.fromkeys(anonymizer.text(f)[:300] for f in memory.files))
        if any(getattr(memory, name) != value for name, value in before.items()):
            changed.append(memory)
    if write and changed:
        # Made again from the anonymised text: the old vector was the original words'.
        vectors = embed_queries([memory.content for memory in changed])
        for memory, vector in zip(changed, vectors, strict=True):
            memory.embedding = vector
            memory.fingerprint = fingerprint(memory.content)
        update_each(
            Memory, changed, [*MEMORY_TEXT, "details", "tags", "files", "embedding", "fingerprint"]
        )
    return Counter(memories=len(changed))


def _anonymise_quotes(evidence, anonymizer, *, write: bool) -> Counter:
    from sessions.forget.anonymize import update_each

    changed = []
    for row in evidence.only("pk", "quote").order_by("pk"):
        quote = anonymizer.text(row.quote)
        if quote != row.quote:
            row.quote = quote
            changed.append(row)
    if write and changed:
        update_each(MemoryEvidence, changed, ["quote"])
    return Counter(evidence_quotes=len(changed))


def _anonymise_history(events, anonymizer, *, write: bool) -> Counter:
    """The reasons in memories' histories ("superseded by…", "Kate said it is wrong")."""
    from sessions.forget.anonymize import update_each

    changed = []
    for event in events.only("pk", "reason", "actor").order_by("pk"):
        reason, actor = anonymizer.text(event.reason)[:500], anonymizer.text(event.actor)[:64]
        if (reason, actor) != (event.reason, event.actor):
            event.reason, event.actor = reason, actor
            changed.append(event)
    if write and changed:
        update_each(MemoryEvent, changed, ["reason", "actor"])
    return Counter(history_reasons=len(changed))
