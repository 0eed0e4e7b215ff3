"""Words and sentences of what people wrote in a session, shared by the summary, the topics
and the entity extractor. Pure Python: no database, no Django.

``prose_segments`` keeps the readable prose of a message (paragraphs and list items; no code
blocks, diffs, tables, conflict markers or the tags agents inject), ``prose_sentences``
splits it into sentences, ``content_words`` gives a sentence's meaningful words, and
``fit_words`` shortens a text at a word boundary. ``word_set`` is how word lists are written
here: one string, words separated by whitespace.
"""

from __future__ import annotations

import re

ELLIPSIS = "…"
MAX_READ = 6000  # characters of one message that are read for prose


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text``."""
    return frozenset(text.split())


# English stopwords plus words too common in chat and agent sessions to carry meaning.
STOPWORDS = word_set(
    """
a about above across actually after again against ago ah all almost along already also
although always am among an and another any anybody anyone anything anyway anywhere are
aren't around as ask asked at away back be became because become been before being below
besides best better between beyond both but by can can't cannot could couldn't did
didn't do does doesn't doing don't done down during each either else enough etc even
ever every everybody everyone everything everywhere few first for from further get gets
getting give given go goes going gone got gotten had hadn't has hasn't have haven't
having he he'd he'll he's her here here's hers herself him himself his how how's however
i i'd i'll i'm i've if in indeed instead into is isn't it it'd it'll it's its itself
just keep kind last least less let let's like likely made make makes making many may
maybe me might mine more most mostly much must mustn't my myself near need needed needs
neither never next no nobody none nor not nothing now of off often oh ok okay on once
one only onto or other others otherwise ought our ours ourselves out over own per
perhaps please put quite rather re really said same say says see seem seemed seems seen
several shall shan't she she'd she'll she's should shouldn't show since so some somebody
someone something sometimes somewhat soon still such sure take taken than that that's
the their theirs them themselves then there there's these they they'd they'll they're
they've thing things this those though through thus to together too toward towards try
trying two under unless until up upon us use used uses using very via was wasn't way we
we'd we'll we're we've well were weren't what what's whatever when when's where where's
whether which while who who's whoever whole whom whose why why's will with within
without won't would wouldn't yes yet you you'd you'll you're you've your yours yourself
yourselves able add added adding allow already anything awesome bad big bit call called
came check checked checking come comes coming could current currently day days different
doing else end example fine following found gave glad go good got great guess hey hi
hello help helps here hope idea important info information interesting know known later
let lets little look looked looking looks lot lots love loved mean means mind moment
much new nice now okay part point pretty probably ready right run running saw see seeing
set sounds start started stuff sure tell thank thanks thought time times today told true
turn want wanted wants week weeks went whole wonderful work worked working works wow
yeah year years yep yesterday awesome amazing cool totally definitely absolutely super
exactly especially feel feeling felt happy excited fun kind lovely sweet tough hard easy
step steps update updated updating file files code line lines using based provide
provided following follow follows include includes including required require requires
"""
)

# A fenced block closes with a fence of the same length (```` may hold ``` inside).
FENCE = re.compile(r"(?<![`~])(`{3,}|~{3,})(?![`~]).*?(?:(?<![`~])\1(?![`~])|\Z)", re.S)
_NOISE_TAG = re.compile(
    r"<(system-reminder|local-command-std\w*|command-[\w-]+|user-prompt-submit-hook|"
    r"environment_context|user_instructions|permissions[\w -]*|INSTRUCTIONS)>.*?</\1>",
    re.S | re.I,
)
_ANY_TAG = re.compile(r"</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>")
_MD_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")
_MD_EMPH = re.compile(r"(\*\*|__)(.+?)\1")
_MD_STAR = re.compile(r"(?<![\w*])\*(\S(?:[^*\n]*?\S)?)\*(?![\w*])")
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s+")
_DIFF_LINE = re.compile(r"^(?:@@|\+\+\+ |--- |diff --git|index [0-9a-f]|\*\*\* |[+-](?![\s-]))")
_CONFLICT = re.compile(r"^(?:<{7}|={7}|>{7})")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "mr.", "mrs.", "ms.", "dr.", "approx.", "no.")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'+#-]*")

# The end-of-conversation marker of simulated users (tau-bench's "###STOP###"): not prose.
_STOP_MARK = re.compile(r"#{3}\s*STOP\s*#{3}", re.I)


def _looks_like_code(line: str) -> bool:
    stripped = line.strip()
    if not stripped:
        return False
    if stripped.startswith(("import ", "from ", "def ", "class ", "$ ", ">>> ", "return ", "//")):
        return bool(
            re.match(
                r"^(?:from \S+ import|import \S+$|def \w|class \w|\$ |>>> |return |//)", stripped
            )
        )
    if stripped.endswith(("{", "}", ";", "};", "),", "=>")):
        return True
    symbols = sum(1 for ch in stripped if not ch.isalnum() and not ch.isspace())
    return len(stripped) > 8 and symbols / len(stripped) > 0.3


def prose_segments(text: str, limit: int = MAX_READ) -> list[str]:
    """Paragraphs/list items of readable prose in ``text``: no code, diffs, tables or tags."""
    if not text:
        return []
    text = text[: limit * 4]
    text = _STOP_MARK.sub(" ", text)
    text = FENCE.sub("\n\n", text)
    text = _NOISE_TAG.sub(" ", text)
    text = _ANY_TAG.sub(" ", text)
    text = text[:limit]
    segments: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            segments.append(" ".join(current))
            current.clear()

    for raw in text.split("\n"):
        line = raw.rstrip()
        if not line.strip():
            flush()
            continue
        if (
            _DIFF_LINE.match(line)
            or _CONFLICT.match(line)
            or line.lstrip().startswith(("|", ">"))
            or _looks_like_code(line)
        ):
            flush()
            continue
        starts_item = bool(_BULLET.match(line) or _HEADING.match(line))
        line = _HEADING.sub("", _BULLET.sub("", line))
        line = _MD_LINK.sub(r"\1", line)
        line = _MD_STAR.sub(r"\1", _MD_EMPH.sub(r"\2", line)).replace("`", "").strip()
        if not line:
            continue
        if starts_item:
            flush()
            current.append(line)
            if _HEADING.match(raw):
                flush()
        else:
            current.append(line)
            if line.endswith(":"):
                flush()
    flush()
    return [re.sub(r"\s+", " ", segment).strip() for segment in segments if segment.strip()]


def split_sentences(segment: str) -> list[str]:
    pieces = _SENTENCE_SPLIT.split(segment)
    sentences: list[str] = []
    for piece in pieces:
        piece = piece.strip()
        if not piece:
            continue
        if sentences and sentences[-1].lower().endswith(_ABBREVIATIONS):
            sentences[-1] = f"{sentences[-1]} {piece}"
        else:
            sentences.append(piece)
    return sentences


def prose_sentences(text: str, limit: int = MAX_READ) -> list[str]:
    return [s for segment in prose_segments(text, limit) for s in split_sentences(segment)]


def _norm_word(word: str) -> str:
    word = word.lower().strip("'-")
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_words(sentence: str) -> set[str]:
    """The meaningful words of a sentence, lowercased and singular."""
    return {
        _norm_word(w) for w in _WORD.findall(sentence) if len(w) > 2 and w.lower() not in STOPWORDS
    }


def fit_words(text: str, max_chars: int, *, mark: bool = True) -> str:
    """``text`` shortened to at most ``max_chars`` at a word boundary ("…" when cut)."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    if max_chars <= 0:
        return ""
    room = max_chars - (len(ELLIPSIS) if mark else 0)
    cut = text[: room + 1]
    space = cut.rfind(" ")
    if space <= 0:
        # One word longer than the limit: the only case a word is cut.
        return text[:max_chars]
    head = cut[:space].rstrip(" ,;:-–—(")
    return f"{head}{ELLIPSIS}" if mark else head


def strip_end(text: str) -> str:
    return text.strip().rstrip(".;,:!? ").strip()


def capitalize(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text
