"""Session topics (a session's ``topics``, docs/api.md: "vector-db,chromadb,architecture").

``derive_topics`` returns a few lowercase, hyphenated keyphrases per session, from

* the text: RAKE-style candidates (Rose et al., 2010: runs of words between stopwords and
  punctuation, at most 3 words) scored by how many messages use them (document frequency)
  and how often, with a small bonus for multi-word phrases. Only user and assistant prose is
  read (no injected messages, tool calls, tool output, code blocks, diffs); URLs, paths,
  file names, hashes, numbers and identifiers with ``_`` are dropped first;
* the entities: the short forms of the most frequent ones (a package's name, a file's stem,
  a function's or class's name), weighted by their count.

Deterministic: ties are broken alphabetically. Pure Python, no database.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from sessions.enrich.text import STOPWORDS, prose_segments, word_set
from sessions.enrich.transcript import attr, entity_pairs, is_injected, sample_positions

__all__ = ["derive_topics", "key_phrases"]

MAX_TOPIC_CHARS = 64
_MAX_MESSAGES = 600
_MAX_PHRASE_WORDS = 3

_URL = re.compile(r"\b(?:https?|ftp|file|ssh|git)://\S+|\bwww\.\S+", re.I)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")
_PATH = re.compile(r"\S*[/\\]\S*")
_FILENAME = re.compile(r"\b[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,5}\b(?=[\s,;:)'\"]|$)")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'+#.-]*")
_HEXISH = re.compile(r"^(?=.*\d)[0-9a-f]{6,}$")
_SPLITTERS = re.compile(r"[.,;:!?()\[\]{}\"“”‘’<>=*/\\|–—]|\s-\s|\s'|'\s")
# Extra words that make poor topics in agent sessions and chat (on top of text.STOPWORDS).
_GENERIC = word_set(
    """
return returns returned empty clear message
assistant user users agent model session sessions message messages conversation question
questions answer answers issue issues problem problems change changes thing stuff way
output input result results value values name names type types error errors test tests
function functions method methods class classes object objects variable variables data
command commands tool tools option options version versions directory folder folders
path paths project projects repo repository task tasks request response details detail
approach solution context case cases number numbers list lists item items place today
tomorrow morning evening night weekend month months people person guy friend friends
family life world lot bit sort kinds yes sure hope wish fine special whole real true
share shared sharing talk talking chat chatting catch glad proud cool nice hard better
best last next new old great good bad big small little long short high low gonna wanna
gotta kinda sorta btw lol haha omg gather export exported apply applied create created
creating configure configured confirm confirmed proceed necessary assist assisted
implement implemented provide provides fix fixed fixing block blocks ensure make sure
done add include able possible available specific simple correct correctly properly
following follows below above shares share photo photos pic pics picture pictures est pm
am utc gmt total currently look seems let needs set
"""
)
_GENERIC_STEMS = word_set(
    """
index main init __init__ readme license changelog setup config settings utils util
helpers helper common base test tests conftest package package-lock makefile dockerfile
app module mod lib core types constants models views urls admin apps migrations tmp temp
"""
)


def _clean(text: str) -> str:
    text = _URL.sub(" . ", text)
    text = _EMAIL.sub(" . ", text)
    text = _PATH.sub(" . ", text)
    return _FILENAME.sub(" . ", text)


def _word_ok(token: str) -> bool:
    """A word that may be part of a topic (generic words only after the first word)."""
    if len(token) < 3 or len(token) > 30:
        return False
    if token in STOPWORDS:
        return False
    if "-" in token:
        parts = token.split("-")
        if parts[0] in STOPWORDS or parts[-1] in STOPWORDS:
            return False  # "in-process", "local-first"
    if "_" in token or "'" in token or "." in token:
        return False
    if not token[0].isalpha():
        return False
    if _HEXISH.match(token):
        return False
    return sum(ch.isdigit() for ch in token) <= 2


def _phrases(segment: str, names: frozenset[str] = frozenset()) -> list[list[str]]:
    """Runs of candidate words between stopwords, speakers' names and punctuation."""
    runs: list[list[str]] = []
    for chunk in _SPLITTERS.split(_clean(segment)):
        run: list[str] = []
        for raw in chunk.split():
            token = raw.lower().strip("'-+#.")
            if _TOKEN.fullmatch(token or "-") and _word_ok(token) and not _is_name(token, names):
                run.append(token)
                continue
            if run:
                runs.append(run)
            run = []
        if run:
            runs.append(run)
    return runs


def _is_name(token: str, names: frozenset[str]) -> bool:
    """A speaker's name or its short form ("mel" for Melanie)."""
    return token in names or (len(token) >= 3 and any(n.startswith(token) for n in names))


def _speaker_names(messages: Sequence[Any]) -> frozenset[str]:
    names: set[str] = set()
    for message in messages[:5000]:
        author = str(attr(message, "author") or "").strip()
        if re.fullmatch(r"[A-Z][a-z]+(?: [A-Z][a-z]+)*", author):
            names.update(part.lower() for part in author.split())
    return frozenset(names)


def _prose_messages(messages: Sequence[Any]) -> list[tuple[str, str]]:
    """``(role, content)`` of the user and assistant prose messages (a sample when many)."""
    positions = []
    lengths = {}
    for pos, message in enumerate(messages):
        role = attr(message, "role")
        if role not in ("user", "assistant") or is_injected(message):
            continue
        if attr(message, "tool_name"):
            continue
        content = attr(message, "content")
        if isinstance(content, str) and content.strip():
            positions.append(pos)
            lengths[pos] = len(content)
    if len(positions) > _MAX_MESSAGES:
        positions = sorted(
            set(sample_positions(positions, lengths)) | set(positions[:: len(positions) // 400])
        )
    return [(str(attr(messages[p], "role")), str(attr(messages[p], "content"))) for p in positions]


def _singular(word: str, vocabulary: Counter[str]) -> str:
    if len(word) > 4 and word.endswith("ies") and vocabulary.get(word[:-3] + "y"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        if vocabulary.get(word[:-1]):
            return word[:-1]
        if word.endswith("es") and vocabulary.get(word[:-2]):
            return word[:-2]
    return word


def _text_candidates(messages: Sequence[Any]) -> dict[str, float]:
    """Scores of space-separated keyphrases found in the prose."""
    documents: list[tuple[float, list[list[str]]]] = []
    vocabulary: Counter[str] = Counter()
    names = _speaker_names(messages)
    prose = _prose_messages(messages)
    roles = {role for role, _ in prose}
    for role, content in prose:
        runs = [run for segment in prose_segments(content) for run in _phrases(segment, names)]
        # The user's words say what the session is about; agents repeat boilerplate.
        documents.append((2.0 if role == "user" and len(roles) > 1 else 1.0, runs))
        for run in runs:
            vocabulary.update(run)
    if not vocabulary:
        return {}
    frequency: Counter[str] = Counter()
    spread: Counter[str] = Counter()
    for weight, runs in documents:
        seen: set[str] = set()
        for run in runs:
            words = [_singular(w, vocabulary) for w in run]
            grams = set()
            if len(words) <= _MAX_PHRASE_WORDS:
                grams.add(" ".join(words))
            for size in range(1, min(len(words), _MAX_PHRASE_WORDS) + 1):
                if size == len(words):
                    continue
                for start in range(len(words) - size + 1):
                    # Sub-phrases of a longer run count, with single words at half weight.
                    grams.add(" ".join(words[start : start + size]))
            # A topic starts with a meaningful word ("regression test", not "new test").
            grams = {g for g in grams if g.split()[0] not in _GENERIC}
            for gram in grams:
                frequency[gram] += 1
            seen |= grams
        for gram in seen:
            spread[gram] += weight
    documents_count = sum(weight for weight, _ in documents)
    scores: dict[str, float] = {}
    for gram, count in frequency.items():
        n_words = gram.count(" ") + 1
        if len(gram) > MAX_TOPIC_CHARS:
            continue
        score = spread[gram] + 0.25 * math.log1p(count)
        if documents_count > 3 and spread[gram] >= 0.9 * documents_count and n_words == 1:
            score *= 0.8  # in every message: more likely filler than topic
        if n_words == 1 and re.search(r"(?:ed|ly)$", gram):
            score *= 0.7  # verbs and adverbs make poor topics
        score *= 1.0 + 0.35 * (n_words - 1)
        if n_words > 1 and count < 2:
            score *= 0.6  # a phrase used once: kept for short sessions, rarely wins otherwise
        scores[gram] = score
    # A phrase that holds most uses of one of its words stands for it ("support group"
    # rather than "support").
    for gram in list(scores):
        if " " not in gram or spread[gram] < 2:
            continue
        for word in gram.split():
            if word in scores and spread[gram] >= 0.5 * spread[word]:
                scores[gram] = max(scores[gram], scores[word] * 1.05)
    return scores


def _entity_short_form(etype: str, value: str) -> str:
    value = value.strip().strip("`'\"")
    if etype == "URL" or not value:
        return ""
    if etype == "FILE":
        name = re.split(r"[/\\]", value.rstrip("/\\"))[-1]
        stem = name.split(".")[0] if not name.startswith(".") else name.lstrip(".").split(".")[0]
        stem = re.sub(r"^test_|_test$|\.test$|\.spec$", "", stem)
        if stem.lower() in _GENERIC_STEMS:
            return ""
        value = stem
    elif etype == "COMMAND":
        first = value.split()[0] if value.split() else ""
        value = re.split(r"[/\\]", first)[-1]
    elif etype in ("FUNCTION", "CLASS", "ERROR"):
        value = value.split("(")[0].split(".")[-1]
        value = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", value)
    elif etype == "PACKAGE":
        value = value.split("==")[0].split(">=")[0].split("[")[0].split(".")[0]
    value = re.sub(r"[\s_]+", "-", value.lower())
    value = re.sub(r"[^a-z0-9+#-]", "", value).strip("-")
    if not value or not value[0].isalpha() or len(value) < 2:
        return ""
    parts = value.split("-")
    if all(p in STOPWORDS or p in _GENERIC or p in _GENERIC_STEMS for p in parts):
        return ""
    return value[:MAX_TOPIC_CHARS].strip("-")


_BORING_COMMANDS = word_set(
    """
ls cat cd echo pwd sed grep rg find head tail git mkdir cp mv rm bash sh zsh python
python3 node true printf wc
"""
)


def _entity_candidates(entities: Iterable[Any]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for etype, value, count in entity_pairs(entities):
        short = _entity_short_form(etype, value)
        if not short or (etype == "COMMAND" and short in _BORING_COMMANDS):
            continue
        counts[short] += max(1, count)
    return counts


def _ranked_topics(messages: Sequence[Any], entities: Iterable[Any]) -> list[tuple[float, str]]:
    text = _text_candidates(messages)
    ents = _entity_candidates(entities)
    combined: dict[str, float] = {}
    top_text = max(text.values(), default=0.0)
    for gram, score in text.items():
        combined[gram] = score / top_text if top_text else 0.0
    top_entity = max(ents.values(), default=0)
    for short, count in ents.items():
        key = short.replace("-", " ")
        entity_score = 0.55 + 0.45 * count / top_entity
        combined[key] = combined.get(key, 0.0) + entity_score
    return sorted(((-score, gram) for gram, score in combined.items()), key=lambda x: x)


def _stem(word: str) -> str:
    """A crude stem, only to tell that two topics overlap ("dance", "dancing")."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def key_phrases(
    messages: Iterable[Any], *, entities: Iterable[Any] = (), limit: int = 5
) -> list[str]:
    """The top keyphrases, words separated by spaces (``derive_topics`` hyphenates them)."""
    messages = messages if isinstance(messages, Sequence) else list(messages)
    if limit <= 0:
        return []
    chosen: list[str] = []
    chosen_words: list[set[str]] = []
    for _, gram in _ranked_topics(messages, entities):
        words = {_stem(w) for w in re.split(r"[\s-]+", gram)}
        # Skip a phrase that overlaps one already chosen ("vector" after "vector database").
        if any(words & other for other in chosen_words):
            continue
        chosen.append(gram)
        chosen_words.append(words)
        if len(chosen) >= limit:
            break
    return chosen


def derive_topics(
    messages: Iterable[Any], *, entities: Iterable[Any] = (), limit: int = 5
) -> list[str]:
    """Up to ``limit`` lowercase hyphenated topics ("vector-database", "chromadb"), each at most
    64 characters, best first; deterministic for the same input."""
    topics = []
    for phrase in key_phrases(messages, entities=entities, limit=limit):
        topic = re.sub(r"[^a-z0-9+#]+", "-", phrase.lower()).strip("-")[:MAX_TOPIC_CHARS]
        topic = topic.strip("-")
        if topic and topic not in topics:
            topics.append(topic)
    return topics
