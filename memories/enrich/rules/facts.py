"""Facts of a conversation between people (LoCoMo-like), or of a user chatting with an
assistant without tools: what a speaker says about their own life ("I work at …", "I went
to …", "my sister …"), with the speaker as subject.

Reactions to the other speaker ("I'm so happy for you", "I love that"), opinions ("I
think …") and sentences about the listener are not facts about the speaker and are left
out. A few attributes that hold one value at a time (where one lives or works, age,
marital status, a favourite) get a "<speaker>:<attribute>" topic, so a newer value
supersedes the older."""

from __future__ import annotations

import re

from memories.enrich.rules import Match, clean, key
from sessions.enrich.text import content_words

MIN_WORDS = 6  # "I read a few of them": shorter statements lean on what was said before
_LEAD = re.compile(
    r"^((yeah|yes|yep|oh|wow|well|so|and|but|actually|haha|lol|ha|hey|hi|hmm|ok|okay|aww|"
    r"aw|omg|gosh|right|sure|totally|thanks|thank you|yesterday|today|tonight|recently|"
    r"(last|this|next) (week|weekend|night|month|year|summer|winter|spring|fall|autumn|"
    r"mon|tue|tues|wed|thu|thurs|fri|sat|sun)\w*|a (few|couple of) (days|weeks|months) ago|"
    r"since (we|our) last (spoke|chatted|talked|chat|talk))[ ,!.]*)+",
    re.I,
)
_SUBJECT = re.compile(
    r"^(i|i'm|i've|i'd|i am|i have|my|we|we're|we've|our)\b",
    re.I,
)
_EVENT = re.compile(
    r"^(i|we)\s+(just\s+|recently\s+|finally\s+|also\s+|actually\s+|even\s+)?"
    r"(went|started|joined|bought|got|adopted|moved|ran|visited|took|finished|signed|lost|"
    r"won|made|painted|wrote|played|volunteered|attended|graduated|work|worked|live|lived|"
    r"have|had|own|enjoy|study|studied|teach|taught|became|learned|learnt|traveled|travelled|"
    r"received|organized|organised|met|created|built|started|decided|began|tried|"
    r"used to|love|like|collect|grew up|was born|spent|read|saw|watched|baked|cooked|"
    r"hiked|camped|planted|launched|opened|quit|retired|married|applied|passed|"
    r"completed|published|performed|sang|danced|donated|raised|hosted|cook|bake|paint|"
    r"play|volunteer|practice|practise|run|swim|ride|go|drew|gave|found|sold|wrote|kept|"
    r"(?!(?:loved|liked|wanted|needed|hoped|wished|guessed|figured|used|noticed|"
    r"imagined|agreed|appreciated|wondered|supposed|missed)\b)[a-z]{3,}ed)\b"
    r"|^(i'm|i am)\s+(?!(?:feeling|thinking|doing|wondering|hoping|loving|guessing|"
    r"kidding|saying|asking|talking|glad|telling)\b)[a-z]{3,}ing\b"
    r"|^(i'm|i am)\s+(a|an|from|into|married|single|divorced|pregnant|engaged|"
    r"retired|studying|working|training|learning|taking|planning|going to|starting|"
    r"volunteering|writing|painting|reading|swamped|busy|currently|now|still)\b"
    r"|^(i've|i have|we've|we have)\s+(been|got|had|always|never|just|recently|finally|"
    r"started|joined|adopted|moved|lived|worked|volunteered|a|an|two|three|\d+)\b"
    r"|^(my|our)\s+(\w+\s+){0,2}(sister|brother|mom|mother|dad|father|kids?|son|daughter|"
    r"husband|wife|partner|boyfriend|girlfriend|friend|family|dog|cat|pet|job|boss|team|"
    r"favorite|favourite|name|home|house|parents|grandma|grandmother|grandpa|"
    r"grandfather|children|cousin|aunt|uncle|hobby|goal|dream|band|business|"
    r"company|store|shop|book|car)s?\b",
    re.I,
)
_NOT_A_FACT = re.compile(
    r"\b(you|your|you're|you've|yours)\b"
    r"|\b(think|thinking|no idea|i'?d like|i want to know|everything|nothing|take a look|"
    r"check (it|this) out|look at this)\b|\["
    r"|^(i|we) (have|got) (a few|some|a couple of|lots of|a lot of) (more )?(\w+ )?(plans|news|"
    r"recommendations|ideas|questions|things|stuff)\b"
    r"|^(i|we) (won'?t|can'?t|cannot|wouldn'?t)\b|\bhave a feeling\b"
    r"|^(i'm|i am) (just |currently )?looking for (some |a few |a |an )?(ideas|advice|"
    r"recommendations|suggestions|tips|help|inspiration|something|a way|ways)\b"
    r"|^(i|we)\s+(think|guess|hope|wish|bet|know|understand|agree|appreciate|believe|"
    r"feel|felt|can'?t wait|mean|love (it|that|this|how|the)|like (it|that|this|how|the))\b"
    r"|^(i'm|i am)\s+(so|really|very|super|glad|happy|sorry|excited|thrilled|sure|"
    r"thinking|not sure|good|fine|doing|proud|grateful|thankful)\b",
    re.I,
)
# "I got it from a restaurant", "I painted this with joy": the thing is in an earlier turn or
# a picture, and the memory would not say what it is.
_LEANS_ON_BEFORE = re.compile(
    r"\b(it|them)\b(?!')|\b(this|these|that|those)\b(?=\s*(because|with|from|for|at|in|on|"
    r"and|to|[.,!]|$))",
    re.I,
)


def _leans_on_before(sentence: str) -> bool:
    """A pronoun for the object near the start of the sentence (its first six words, before
    any comma or dash)."""
    head = re.split(r"[,;:–—]| - ", sentence, maxsplit=1)[0]
    return bool(_LEANS_ON_BEFORE.search(" ".join(head.split()[:6])))


_ATTRIBUTES = [
    ("home", re.compile(r"^(i|we)\s+(live|moved|just moved|recently moved) (in|to)\b", re.I)),
    ("work", re.compile(r"^(i|i'm|i am)\s+(work|working|employed) (at|for|as)\b", re.I)),
    ("age", re.compile(r"^(i'm|i am|i just turned|i turned)\s+\d{1,3}( years old)?\b", re.I)),
    (
        "marital_status",
        re.compile(r"^(i'm|i am|i got)\s+(married|single|divorced|engaged)\b", re.I),
    ),
]
_FAVOURITE = re.compile(r"^my (?:all-time )?favou?rite ([a-z ]{2,30}?) (?:is|was|are)\b", re.I)


def match(statement) -> Match | None:
    if not (statement.chat or (statement.role == "user" and not statement.tools)):
        return None
    sentence = _LEAD.sub("", statement.sentence).strip()
    if (
        len(sentence.split()) < MIN_WORDS
        or not _SUBJECT.match(sentence)
        or not _EVENT.match(sentence)
        or _NOT_A_FACT.search(sentence)
        or _leans_on_before(sentence)
    ):
        return None
    speaker = statement.speaker
    content = clean(f"{speaker}: {sentence}")
    details = {"fact": clean(sentence), "subject": speaker}
    topic = _topic(speaker, sentence)
    if topic:
        details["stance"] = key(" ".join(sorted(content_words(sentence))), 12)
    return Match("fact", content, details, topic=topic)


def _topic(speaker: str, sentence: str) -> str:
    who = key(speaker, 3)
    for attribute, cue in _ATTRIBUTES:
        if cue.match(sentence):
            return f"{who}:{attribute}"
    favourite = _FAVOURITE.match(sentence)
    if favourite:
        return f"{who}:favourite_{key(favourite.group(1), 3)}"
    return ""
