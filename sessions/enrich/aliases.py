"""Who is who: the names a project's people and agents are called by (``SpeakerAlias``).

Display names are often not what people call each other ("cwhit_88" is "Caroline" in the
chat; the agent ``architect`` is "Winston"), so a question that names someone the way the
conversation does would miss that person's messages. Learned, per session, from:

- **vocatives**: a name in address position ("Hey Kate!", "Thanks, Jo.", "Mel, did you …",
  "… how are you, Mel?"), an alias of the person addressed: in a session of two speakers the
  other one, otherwise the author of the next message (or of the one before);
- **self-introductions** ("my name is Winston", "call me Jo", "I'm Kate");
- **personas**: the session's ``agent_persona``, and an injected prompt "You are Winston, the
  Architect", aliases of the session's agent;
- **name parts**: the first word of a display name of several ("kate.miller" → "kate").

A word counts as a name only when it is capitalised, is no common word (``NOT_NAMES``, and it
is not written in lower case elsewhere in the same messages: a name rarely is) and is nobody's
own display name. Many people type everything in lower case ("hey kate!"): for a writer whose
messages start in lower case, a greeting or thanks opening a sentence, then a lower-case word
ending it ("hey kate!", "thanks rob", "morning mel :)") is a weak sighting of a name, and
their lower-case words do not count against others' capitalised names.

``evidence`` adds up, across the project, how often each was seen; strong
forms (a greeting or thanks, "my name is", a persona, a name part) count ``STRONG``, so one
of them is enough, while a weak one must be seen twice (search uses ``evidence >= USABLE``).

Incremental and idempotent: a session's contribution (its alias counts) is kept in its
``metadata["speaker_aliases"]``; each enrichment step reads only the new messages and writes
the difference to what the session had contributed, in the transaction that advances the
session's enrichment. A session enriched again from scratch (after a compaction or a removal)
replaces its contribution, so nothing is counted twice. Two sessions of one project enriching
at once add to the same rows through one ``INSERT … ON CONFLICT DO UPDATE``, rows in a fixed
order so the two never deadlock. Only sessions outside the trash count: moving one to the
trash takes its contribution back, restoring it gives it back, and an enrichment step of a
session in the trash changes its metadata only.

Aliases are shared by the whole project and change everyone's searches, so only the sessions
the whole team reads (visibility 'team', docs/visibility.md) count: a private or summary
session's contribution is kept in its metadata but withheld from the project's aliases
(``WITHHELD_KEY``), so no name said only in someone's private session is learned, listed or
used for anyone. When its visibility changes (``visibility_changed``) the contribution is
given back or taken back, as for the trash.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connection
from django.db.models import F
from django.db.models.functions import Greatest

from sessions.models import MessageRole, Session, SpeakerAlias
from teams.models import Visibility

METADATA_KEY = "speaker_aliases"
# In a session's metadata: its contribution is not in the project's aliases, because the
# team does not read the session's messages. Absent (every session before visibility): in.
WITHHELD_KEY = "speaker_aliases_withheld"
STRONG, WEAK = 2, 1
USABLE = 2  # evidence from which search uses an alias
MAX_PER_SESSION = 200  # aliases a session's contribution keeps (a runaway transcript)
TEXT_CHARS = 4000  # of each message: names are said in chat lines, not in tool output

# Common words that are capitalised in address position ("Hi All", "Thanks Again", "Well,
# you…"), titles and kin words, days, months, greetings and pronouns. No word-frequency
# package is installed; the lower-case check below catches most others.
_NOT_NAMES = """
    a about actually again ah aha ahh all alright also am amazing an and anybody anyone
    anyway anyways are as at aw aww awesome baby babe be because best bless boss bro brother
    bruh but buddy by bye captain ceo cheers chief class coach congrats congratulations cool
    cousin dad daddy darling dear definitely did do doc doctor does dude either else
    even ever every everybody everyone everything exactly fam fine first folks for friend
    friends from gang gentlemen girl girls god good goodbye goodnight gosh grandma grandpa
    great guy guys ha haha hah happy have he hello her hers hey hi him his hiya hmm honestly
    honey hope how however i if im in indeed is it its just kid kids kiddo ladies lady later
    lol lord love lovely madam mam man mate maybe me mine miss mister mom mommy mr mrs ms mum
    mummy my nah never nice night no nope not now ok okay omg oh one oops our ours people
    please pretty professor really right same say see she sir sis sister so son sorry
    still sure sweetheart sweetie team teacher thank thanks that the then there these they
    this those though thx too totally true ty uh um umm us very we welcome well what when
    where which who why wow ya yay yeah yep yes yo you your yours yup
    monday tuesday wednesday thursday friday saturday sunday today tomorrow tonight
    yesterday weekend morning afternoon evening
    january february march april may june july august september october november december
    christmas easter
    i'm i'd i'll i've it's that's let's you're we're they're he's she's there's what's
    bae bb babes bestie boo bruv bud champ cutie fella fellas gorgeous handsome heaps homie
    hon hun lad lads legend loads lots mama papa pal peeps queen king stranger sunshine
    sweets sweety tho btw xx xoxo yall world both
"""
NOT_NAMES = frozenset(_NOT_NAMES.split())

_LETTERS = r"[^\W\d_]"
NAME = rf"(?P<name>{_LETTERS}+(?:['’-]{_LETTERS}+)?)"
_GREETING = (
    r"(?i:hey|hi|hello|hiya|heya|yo|morning|good\s+morning|good\s+afternoon|good\s+evening|"
    r"good\s+night|night|thanks|thank\s+you|thx|ty|cheers|bye|goodbye|see\s+you|see\s+ya|later)"
)
# Wishes are as often about someone else ("Happy birthday Sam!" to Sam's mother): weak.
_WISH = (
    r"(?i:congrats|congratulations|welcome|welcome\s+back|love\s+you|miss\s+you|"
    r"happy\s+birthday|well\s+done|great\s+job|good\s+job|nice\s+one|great\s+work|sorry)"
)
_AFTER_NAME = r"(?=\s*(?:[!.,?:;)]|$)|\s+(?!(?i:and|&)\b)[^\W\d_]*[a-z])"
_BEFORE = r"(?:^|(?<=[\s(\"'“]))"
# "Hey Kate!", "Thanks, Jo.", "Good morning Mel": a greeting or thanks, then the name.
# ("Thanks! Glad you liked it": after the greeting's own "!" a new sentence starts.)
GREETING_FORM = re.compile(rf"{_BEFORE}{_GREETING},?\s+{NAME}{_AFTER_NAME}")
WISH_FORM = re.compile(rf"{_BEFORE}{_WISH},?\s+{NAME}{_AFTER_NAME}")
# "Mel, did you…": a sentence opened by the name and a comma, then a word that addresses.
_ADDRESSING = (
    r"(?i:you|you're|your|did|do|does|can|could|would|will|are|have|what|how|when|where|why|"
    r"is|please|thanks|thank|remember|guess|look|listen|check|tell|let|don't|any)\b"
)
OPENING_FORM = re.compile(rf"(?:^|(?<=[.!?]\s)|(?<=\n)){NAME},\s+(?={_ADDRESSING})")
# "hey kate!", "thanks rob", "ok morning mel :)" from a writer in lower case: a greeting or
# thanks opening the message or a sentence (in lower case, "the night shifts?" is no greeting),
# then a lower-case word that ends the sentence (the next character, if any, is no letter).
_OPENING = r"(?:^|(?<=[.!?,;]\s)|(?<=\n)|(?<=\bok\s)|(?<=\boh\s)|(?<=\baw\s)|(?<=\bokay\s))"
LOWER_GREETING_FORM = re.compile(
    rf"{_OPENING}{_GREETING},?\s+(?P<name>[a-z]{{3,}})(?=\s*(?:[^\w\s]|$))"
)
# "… how are you, Mel?": a sentence closed by a comma, the name and its punctuation.
CLOSING_FORM = re.compile(rf",\s+{NAME}\s*[!?.]+(?=\s|$|\W)")
# "my name is Winston", "call me Jo": strong; "I'm Kate": weak ("I'm Fine" is no name, and
# the lower-case check cannot always tell).
STRONG_INTRO = re.compile(rf"(?i:\bmy\s+name\s+is|\bcall\s+me|\bname's)\s+{NAME}\b")
WEAK_INTRO = re.compile(
    rf"(?:^|(?<=[\s,]))(?:I'm|I’m|I\s+am)\s+{NAME}(?=\s*[,.!]|\s+(?i:the|your|and)\b)"
)
# An injected prompt naming the agent: "You are Winston, the Architect".
PROMPT_PERSONA = re.compile(
    rf"(?i:\byou\s+are|\byour\s+name\s+is)\s+{NAME}(?=\s*,|\s+(?i:the|a|an)\b|\s*\.|\s*\()"
)
_SPLIT_NAME = re.compile(r"[\s._\-@+]+")
_WORD_SEPARATORS = re.compile(r"[\s_\-]+")  # where PostgreSQL's parser splits a name


@dataclass(frozen=True)
class Found:
    alias: str
    speaker: str
    is_agent: bool
    source: str
    weight: int

    @property
    def key(self) -> tuple[str, str, bool]:
        return (self.alias.lower(), self.speaker, self.is_agent)


def is_name(word: str) -> bool:
    """Capitalised, at least two letters with a lower-case one, no common word and no
    possessive."""
    return (
        len(word) >= 2
        and word[0].isupper()
        and any(c.islower() for c in word)
        and word.lower().replace("’", "'") not in NOT_NAMES
        and not word.lower().endswith(("'s", "’s"))  # "Boston's": a possessive, no name
    )


def vocatives(text: str) -> list[tuple[str, int]]:
    """Names the text addresses someone by, with their weight (strong for a greeting or
    thanks)."""
    found = [(m.group("name"), STRONG) for m in GREETING_FORM.finditer(text)]
    found += [(m.group("name"), WEAK) for m in WISH_FORM.finditer(text)]
    found += [(m.group("name"), WEAK) for m in OPENING_FORM.finditer(text)]
    found += [(m.group("name"), WEAK) for m in CLOSING_FORM.finditer(text)]
    return _once_each(found)


def lower_case_vocatives(text: str) -> list[str]:
    """Names a writer in lower case addresses someone by ("hey kate!"): weak sightings."""
    return list(
        dict.fromkeys(
            m.group("name")
            for m in LOWER_GREETING_FORM.finditer(text)
            if m.group("name") not in NOT_NAMES
        )
    )


def writes_in_lower_case(texts: list[str]) -> bool:
    """Whether a writer's messages start in lower case more often than not."""
    starts = [c for t in texts for c in t.lstrip()[:1] if c.isalpha()]
    lower = sum(c.islower() for c in starts)
    return lower > len(starts) - lower


def _once_each(found: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Each name once per message, at its strongest ("Thanks, Jo." is one sighting)."""
    best: dict[str, int] = {}
    for name, weight in found:
        if is_name(name):
            best[name] = max(best.get(name, 0), weight)
    return list(best.items())


def self_introductions(text: str) -> list[tuple[str, int]]:
    found = [(m.group("name"), STRONG) for m in STRONG_INTRO.finditer(text)]
    found += [(m.group("name"), WEAK) for m in WEAK_INTRO.finditer(text)]
    return _once_each(found)


def prompt_personas(text: str) -> list[str]:
    return [m.group("name") for m in PROMPT_PERSONA.finditer(text) if is_name(m.group("name"))]


def name_words(display_name: str) -> list[str]:
    return [w for w in _SPLIT_NAME.split(display_name.strip()) if w]


_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def first_name(display_name: str) -> str | None:
    """The first word of a display name that the keyword index keeps whole ("kate.miller",
    "KateMiller", "kate@example.com" → "kate"; "Kate Miller" and "kate_m" are indexed word by
    word already). No short form is guessed ("Katherine" ↛ "Kate")."""
    name = display_name.strip()
    if len(_WORD_SEPARATORS.split(name)) > 1:
        return None
    words = [w for w in re.split(r"[.@+]+", _CAMEL.sub(".", name)) if w]
    if len(words) < 2 or len(words[0]) < 3 or not words[0].isalpha():
        return None
    return None if words[0].lower() in NOT_NAMES else words[0]


# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Speaker:
    name: str
    is_agent: bool


def speaker_of(message, agent_name: str) -> Speaker | None:
    """Who wrote a message: its author, or the session's agent for an assistant message
    without one. A user or system message without an author has nobody to name."""
    if message.author:
        return Speaker(message.author, False)
    if message.role == MessageRole.ASSISTANT:
        return Speaker(agent_name, True)
    return None


def _injected(message) -> bool:
    return message.role == MessageRole.SYSTEM or bool((message.metadata or {}).get("injected"))


def found_in(session, messages: list, speakers: set[Speaker]) -> list[Found]:
    """The aliases ``messages`` (new messages of ``session``, in order) show, once per
    sighting; ``speakers`` are the session's speakers (all of its messages)."""
    agent = session.agent_name
    taken = {w.lower() for s in speakers for w in name_words(s.name)}
    authors = [speaker_of(m, agent) for m in messages]
    texts: dict[Speaker | None, list[str]] = {}
    for m, author in zip(messages, authors, strict=True):
        if m.removed_at is None:
            texts.setdefault(author, []).append((m.content or "")[:TEXT_CHARS])
    # Writers in lower case: their words say nothing of what is a name.
    lower_case = {a for a, ts in texts.items() if a is not None and writes_in_lower_case(ts)}
    capitalising = "\n".join(t for a, ts in texts.items() if a not in lower_case for t in ts)
    lower_words = set(re.findall(rf"\b[a-z]{_LETTERS}*", capitalising))
    found: list[Found] = []

    def add(
        alias: str, speaker: Speaker | None, source: str, weight: int, lower: bool = False
    ) -> None:
        key = alias.lower()
        if speaker is None or key in taken or (key in lower_words and not lower):
            return
        found.append(Found(alias[:100], speaker.name[:200], speaker.is_agent, source, weight))

    if session.agent_persona and is_name(session.agent_persona.split()[0]):
        add(session.agent_persona.split()[0], Speaker(agent, True), "persona", STRONG)
    for speaker in speakers:
        part = None if speaker.is_agent else first_name(speaker.name)
        if part:
            found.append(Found(part[:100], speaker.name[:200], False, "name_part", STRONG))
    for i, message in enumerate(messages):
        if message.removed_at is not None or not message.content:
            continue
        text, author = message.content[:TEXT_CHARS], authors[i]
        if _injected(message):
            for name in prompt_personas(text):
                add(name, Speaker(agent, True), "persona", STRONG)
            continue
        if message.role == MessageRole.TOOL or author is None:
            continue
        for name, weight in self_introductions(text):
            add(name, author, "self", weight)
        named = vocatives(text)
        if author in lower_case:
            named += [(name, WEAK) for name in lower_case_vocatives(text)]
        if named:
            addressee = _addressee(author, authors, i, speakers)
            for name, weight in named:
                add(name, addressee, "vocative", weight, lower=name.islower())
    return found


def _addressee(
    author: Speaker, authors: list[Speaker | None], i: int, speakers: set[Speaker]
) -> Speaker | None:
    """Whom message ``i`` of ``author`` speaks to: the other one of two speakers; among
    more, the next message's author, or the previous one's."""
    others = speakers - {author}
    if len(others) == 1:
        return next(iter(others))
    for j in (i + 1, i - 1):
        if 0 <= j < len(authors) and authors[j] is not None and authors[j] != author:
            return authors[j]
    return None


def session_speakers(session) -> set[Speaker]:
    """Distinct speakers of all the session's messages (one statement)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT author, author = '' FROM agent_sessions_message"
            " WHERE session_id = %s AND team_id = %s"
            " AND (author <> '' OR role = %s) AND removed_at IS NULL LIMIT 50",
            [session.pk, session.team_id, MessageRole.ASSISTANT],
        )
        rows = cursor.fetchall()
    return {
        Speaker(session.agent_name, True) if agentic else Speaker(a, False) for a, agentic in rows
    }


# ---------------------------------------------------------------------------------------


@dataclass
class AliasUpdate:
    """What one enrichment step changes: the session's new contribution (for its metadata)
    and the evidence to add to (or take from) the project's aliases."""

    contribution: list[list]
    changes: list[tuple[Found, int]]

    def save(self, session) -> None:
        """Write the changes (inside the caller's transaction, under the session's lock)."""
        _upsert(session, [(f, d) for f, d in self.changes if d > 0])
        _take_back(session, [(f, -d) for f, d in self.changes if d < 0])


def learn(session, new: list, *, from_scratch: bool) -> AliasUpdate:
    """The aliases shown by ``new`` (the session's messages past its enrichment), merged
    with what the session contributed before (``from_scratch``: replacing it)."""
    before = _contribution(session.metadata)
    total: dict[tuple, Found] = {} if from_scratch else dict(before)
    counts = Counter() if from_scratch else Counter({k: f.weight for k, f in before.items()})
    for item in found_in(session, new, session_speakers(session)):
        once = item.source in ("persona", "name_part")  # said of the session, not each turn
        counts[item.key] = (
            max(counts[item.key], item.weight) if once else counts[item.key] + item.weight
        )
        total.setdefault(item.key, item)
    kept = sorted(total, key=lambda k: (-counts[k], k))[:MAX_PER_SESSION]
    after = {k: _with_weight(total[k], counts[k]) for k in kept}
    changes = []
    for key in sorted(set(after) | set(before)):
        delta = (after[key].weight if key in after else 0) - (
            before[key].weight if key in before else 0
        )
        if delta:
            changes.append((after.get(key) or before[key], delta))
    contribution = [[f.alias, f.speaker, f.is_agent, f.source, f.weight] for f in after.values()]
    return AliasUpdate(contribution, changes)


def shared(visibility: str) -> bool:
    """Whether a session of this visibility counts for its project's aliases: only when
    the whole team reads its messages."""
    return visibility == Visibility.TEAM


def with_withheld(metadata: dict, visibility: str) -> dict:
    """``metadata`` saying whether the session's contribution is withheld (the enrichment
    writes it with the contribution, from the visibility read under its lock)."""
    metadata = dict(metadata)
    if shared(visibility):
        metadata.pop(WITHHELD_KEY, None)
    else:
        metadata[WITHHELD_KEY] = True
    return metadata


def withdraw(session) -> int:
    """Take a session's contribution out of its project's aliases: it went to the trash (or
    is being anonymised). Called in the transaction that changes it, under its row lock; the
    contribution stays in its metadata for ``give_back``. Returns the names deleted. A
    withheld contribution is not in them: nothing to take."""
    metadata = _metadata_of(session)
    if metadata.get(WITHHELD_KEY):
        return 0
    found = _contribution(metadata).values()
    return _take_back(session, [(f, f.weight) for f in found])


def give_back(session) -> int:
    """Put a restored session's contribution back (the transaction that restored it).
    Returns how many names it gives evidence for (none when it is withheld)."""
    metadata = _metadata_of(session)
    if metadata.get(WITHHELD_KEY):
        return 0
    found = [f for f in _contribution(metadata).values() if f.alias != f.speaker]
    _upsert(session, [(f, f.weight) for f in found])
    return len(found)


def visibility_changed(session_ids: list[int]) -> Counter:
    """Sessions got a new visibility (sessions/derived.py): a contribution the team may no
    longer read is taken back from the project's aliases, one it now reads is given back
    (a session in the trash only changes its mark: restoring it gives back what is not
    withheld). Under the sessions' row locks, in the caller's transaction."""
    changed = Counter()
    rows = (
        Session.objects.filter(pk__in=session_ids)
        .select_for_update(no_key=True)
        .only("id", "team_id", "project_id", "visibility", "deleted_at", "metadata")
        .order_by("pk")
    )
    for session in rows:
        withhold = not shared(session.visibility)
        if bool((session.metadata or {}).get(WITHHELD_KEY)) == withhold:
            continue
        if session.deleted_at is None and withhold:
            changed["aliases"] += withdraw(session)
        _mark_withheld(session, withhold)
        if session.deleted_at is None and not withhold:
            changed["aliases"] += give_back(session)  # reads the mark just cleared
    return changed


def _mark_withheld(session, withheld: bool) -> None:
    """Set or clear the session's ``WITHHELD_KEY`` alone (the rest of its metadata is the
    enrichment's)."""
    change = f"metadata || jsonb_build_object('{WITHHELD_KEY}', true)"
    if not withheld:
        change = f"metadata - '{WITHHELD_KEY}'"
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Session._meta.db_table} SET metadata = {change} WHERE id = %s",
            [session.pk],
        )


def _sessions(session_ids: list[int]):
    return Session.objects.filter(pk__in=session_ids).only("id", "team_id", "project_id")


def withdraw_all(session_ids: list[int]) -> Counter:
    """``withdraw`` each of these sessions (sessions/derived.py's ``trashed``)."""
    return Counter(aliases=sum(withdraw(s) for s in _sessions(session_ids).order_by("pk")))


def give_back_all(session_ids: list[int]) -> Counter:
    """``give_back`` each of these sessions (sessions/derived.py's ``restored``)."""
    return Counter(aliases=sum(give_back(s) for s in _sessions(session_ids).order_by("pk")))


def _metadata_of(session) -> dict:
    # Read under the caller's lock: an enrichment that committed just before changed it.
    return Session.objects.filter(pk=session.pk).values_list("metadata", flat=True).first() or {}


def _with_weight(found: Found, weight: int) -> Found:
    return Found(found.alias, found.speaker, found.is_agent, found.source, weight)


def _contribution(metadata: dict | None) -> dict[tuple, Found]:
    rows = (metadata or {}).get(METADATA_KEY) or []
    found = {}
    for row in rows:
        try:
            item = Found(str(row[0]), str(row[1]), bool(row[2]), str(row[3]), int(row[4]))
        except (IndexError, TypeError, ValueError):
            continue  # a hand-edited metadata: what it said is forgotten, not a failure
        found[item.key] = item
    return found


# The strongest source names a row: a persona over an introduction over a name part over
# being addressed.
SOURCE_RANK = ["vocative", "name_part", "self", "persona"]
TABLE = SpeakerAlias._meta.db_table


def _upsert(session, rows: Iterable[tuple[Found, int]]) -> None:
    rows = sorted(rows, key=lambda r: r[0].key)  # one order for every writer: no deadlock
    if not rows:
        return
    values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s, now(), now())"] * len(rows))
    params = []
    for found, delta in rows:
        params += [
            session.team_id,
            session.project_id,
            found.alias,
            found.alias.lower(),
            found.speaker,
            found.is_agent,
            found.source,
            delta,
        ]
    new_rank, old_rank = (f"array_position(%s::text[], {c}.source)" for c in ("EXCLUDED", TABLE))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {TABLE} (team_id, project_id, alias, alias_key, speaker, is_agent,"
            f" source, evidence, created_at, updated_at) VALUES {values}"
            " ON CONFLICT ON CONSTRAINT speaker_alias_uniq DO UPDATE SET"
            f" evidence = {TABLE}.evidence + EXCLUDED.evidence, updated_at = now(),"
            f" source = CASE WHEN {new_rank} > {old_rank}"
            f" THEN EXCLUDED.source ELSE {TABLE}.source END",
            [*params, SOURCE_RANK, SOURCE_RANK],
        )


def _take_back(session, rows: list[tuple[Found, int]]) -> int:
    """Take evidence back; a name left with none is deleted (it names someone nobody's
    session shows any more: a trashed session's contribution comes back on restore).
    Returns how many rows were deleted."""
    dropped = 0
    for found, amount in sorted(rows, key=lambda r: r[0].key):
        row = SpeakerAlias.objects.filter(
            project_id=session.project_id,
            alias_key=found.alias.lower(),
            speaker=found.speaker,
            is_agent=found.is_agent,
        )
        row.update(evidence=Greatest(F("evidence") - amount, 0))
        dropped += row.filter(evidence__lte=0).delete()[0]
    return dropped
