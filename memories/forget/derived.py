"""Memories and diaries follow their sessions when they are forgotten
(``sessions/forget/derived.py`` calls these hooks inside the erasure's transaction).

- Trash: a trashed session's memories are hidden by ``MemoryQuerySet.live`` (they come back
  on restore); the diary entries that list it are deleted now and their days marked due,
  so the day is distilled again without it (and again with it after a restore).
- Purge: memories of the session go with its row (a cascade), and so do evidence rows in
  it; an extracted memory left with no evidence at all goes too (it was read from those
  messages alone). Memories written by agents or people keep their own words.
- A removed message: its evidence and quotes go; an extracted memory it was the only
  evidence of goes.
- Anonymisation: the memories of the session, and those with evidence in it, are rewritten
  with the session's anonymizer (content, details, person, agent, topic, tags, quotes) and
  embedded again from the new text; the session's diary entries are deleted and their days
  marked due. After a whole project, its memories of no session and its diary entries that
  still name its people get the same.
"""

from __future__ import annotations

from collections import Counter

from django.db.models import Count, Q

from memories.diary import due
from memories.diary.models import DiaryEntry
from memories.models import Memory, MemoryEvidence, Origin
from sessions.forget.derived import Derived


def _public_ids(session_ids: list[int]) -> list[str]:
    from sessions.models import Session

    return list(Session.objects.filter(pk__in=session_ids).values_list("public_id", flat=True))


def _drop_unsupported(memory_ids) -> int:
    """Extracted memories with no evidence left: they were read from what was erased."""
    orphans = (
        Memory.objects.filter(pk__in=list(memory_ids), origin=Origin.EXTRACTOR)
        .annotate(left=Count("evidence"))
        .filter(left=0)
    )
    pks = list(orphans.values_list("pk", flat=True))
    if not pks:
        return 0
    due.mark_memories(Memory.objects.filter(pk__in=pks).only("team_id", "occurred_at", "session"))
    return Memory.objects.filter(pk__in=pks).delete()[1].get("memories.Memory", 0)


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
        elsewhere = MemoryEvidence.objects.filter(session_id__in=session_ids).exclude(
            memory__session_id__in=session_ids
        )
        memory_ids = set(elsewhere.values_list("memory_id", flat=True))
        elsewhere.delete()
        counts["memories"] += _drop_unsupported(memory_ids)
        own = Memory.objects.filter(session_id__in=session_ids)
        counts["memories"] += own.count()  # (deleted with their sessions' rows)
        return counts

    def message_removed(self, session, message):
        evidence = MemoryEvidence.objects.filter(message_id=message.pk)
        memory_ids = set(evidence.values_list("memory_id", flat=True))
        evidence.delete()
        counts = _forget_diaries([session.pk])
        counts["memories"] += _drop_unsupported(memory_ids)
        return counts

    def anonymise(self, session, anonymizer, *, write):
        memories = Memory.objects.filter(
            Q(session_id=session.pk) | Q(evidence__session_id=session.pk)
        ).distinct()
        counts = _anonymise_memories(memories, anonymizer, write=write)
        quotes = MemoryEvidence.objects.filter(
            Q(session_id=session.pk) | Q(memory__in=memories)
        ).distinct()
        counts += _anonymise_quotes(quotes, anonymizer, write=write)
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

    def captured(self, session_ids):
        return Counter(diary_days=due.mark_late(session_ids))

    def purge_expired(self, now):
        from memories.forget import trash

        return Counter(memories=trash.purge_expired(now))


MEMORY_TEXT = ("content", "person", "agent", "topic")


def _anonymise_memories(memories, anonymizer, *, write: bool) -> Counter:
    from memories.capture.record import _embed, fingerprint

    changed = []
    for memory in memories.defer("embedding").order_by("pk"):
        before = {name: getattr(memory, name) for name in (*MEMORY_TEXT, "details", "tags")}
        memory.content = anonymizer.text(memory.content)
        memory.person = anonymizer.text(memory.person)[:200]
        memory.agent = anonymizer.text(memory.agent)[:64]
        memory.topic = anonymizer.text(memory.topic)[:100]
        memory.details = anonymizer.json(memory.details)
        memory.tags = list(dict.fromkeys(anonymizer.text(t)[:64] for t in memory.tags))
        if any(getattr(memory, name) != value for name, value in before.items()):
            changed.append(memory)
    if write and changed:
        for memory in changed:
            # Made again from the anonymised text: the old vector was the original words'.
            memory.embedding = _embed(memory.content)
            memory.fingerprint = fingerprint(memory.content)
        Memory.objects.bulk_update(
            changed,
            [*MEMORY_TEXT, "details", "tags", "embedding", "fingerprint"],
            batch_size=200,
        )
    return Counter(memories=len(changed))


def _anonymise_quotes(evidence, anonymizer, *, write: bool) -> Counter:
    changed = []
    for row in evidence.only("pk", "quote").order_by("pk"):
        quote = anonymizer.text(row.quote)
        if quote != row.quote:
            row.quote = quote
            changed.append(row)
    if write and changed:
        MemoryEvidence.objects.bulk_update(changed, ["quote"], batch_size=500)
    return Counter(evidence_quotes=len(changed))
