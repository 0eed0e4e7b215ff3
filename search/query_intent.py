"""What a question asks for, from its words.

Does it ask for the noise? Tool output and console lines rank below prose for the same
match (``search/ranking.py``) unless the question is about an error or a command; injected
instructions, unless it is about instructions or a system prompt.

Pure text rules, no database: a question "asks for output" when it holds a path, a
``--flag``, a backticked or code-shaped token (``snake_case``, ``call()``, ``a.b.c``,
``SomethingError``), or a word like error, traceback, failed, command, run, output, log or
stack. A quoted phrase is returned apart: it asks for output only if it occurs in a tool
output or console message among the matches, which the search checks.

Does it ask when? Then messages that say when rank higher (``search/temporal.py``): the
question begins with "when", "what/which year, month, day, date, week or season", "how
long" or "how many days, weeks, months or years" (after an "and", "so", "in", "since", …).

Does it ask what someone asked for? Then a user's prose ranks higher (``search/asked_for.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# /abs/path, ~/x, ./x, dir/file.ext, a/b/c, C:\x ("and/or" and "3/4" are not paths)
_PATH = re.compile(
    r"(?:^|[\s(\"'`])(?:~|\.{1,2})?/[A-Za-z_.][\w.@~+-]+"
    r"|\b[\w.-]+/[\w.@~+-]*\.[A-Za-z]\w{0,5}\b"
    r"|\b[\w.-]+/[\w.@~+-]+/[\w.@~+-]*"
    r"|\b[A-Za-z]:\\\w"
)
_FLAG = re.compile(r"(?:^|\s)--?[A-Za-z][\w-]*")
_BACKTICKS = re.compile(r"`[^`]+`")
_CODE_TOKEN = re.compile(
    r"\b[a-z]+_[a-z0-9_]+\b"  # snake_case
    r"|\b\w+\(\)"  # call()
    r"|\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){2,}\b"  # a.b.c
    r"|\b[A-Z][a-z]+(?:[A-Z][a-z0-9]*)*(?:Error|Exception|Warning|Fault)\b"  # ValueError
    r"|::"
)
_OUTPUT_WORDS = re.compile(
    r"\b(?:errors?|exceptions?|traceback|tracebacks|stack ?traces?|stack|failed|failing|fails?|"
    r"failures?|crash(?:ed|es)?|commands?|run|ran|runs|output|outputs|stdout|stderr|logs?|"
    r"logged|exit code|warnings?|console|terminal|shell|banner|printed|prints?)\b",
    re.I,
)
_INJECTED_WORDS = re.compile(
    r"\b(?:instructions?|system prompts?|prompts?|agents\.md|claude\.md|gemini\.md|skills?|"
    r"guidelines?|polic(?:y|ies)|developer messages?|system messages?|reminders?)\b",
    re.I,
)
_QUOTED = re.compile(r"\"([^\"]{3,200})\"|“([^”]{3,200})”|(?:^|\s)'([^']{3,200})'(?=\s|$|[?.!,])")


# It asks when: "When did …", "In which year …", "How long has …", "How many weeks …".
_WHEN = re.compile(
    r"^\W*(?:(?:and|so|but|in|on|by|until|since|from)\s+)?(?:when\b|what (?:year|month|day|date|"
    r"time|week|season)\b|which (?:year|month|day|date|week|season)\b|how long\b|"
    r"how many (?:days|weeks|months|years)\b)",
    re.I,
)


# It asks what someone asked for: "what was the agent asked to do", "what did they want",
# "what did she call about", "what did the reviewer request" (not "had the question been
# asked": such a passive is about a question, not a request).
_REQUEST = re.compile(
    r"(?<!been )(?<!was )(?<!were )(?<!is )(?<!be )\b(?:asked|wanted|requested)\b"
    r"|\bcall(?:ed)? about\b|\bdid\b[^?]*\b(?:want|ask|request)\b",
    re.I,
)


@dataclass(frozen=True)
class QueryIntent:
    asks_for_request: bool = False  # a user's prose is lifted (search/asked_for.py)
    asks_when: bool = False  # messages that say when are lifted (search/temporal.py)
    wants_output: bool = False  # tool output and console lines are not ranked lower
    wants_injected: bool = False  # injected instructions are not ranked lower
    quoted: tuple[str, ...] = ()  # phrases that ask for output if output holds them


def intent_of(query: str) -> QueryIntent:
    query = query or ""
    quoted = tuple(next(g for g in m.groups() if g) for m in _QUOTED.finditer(query))
    wants_output = bool(
        _PATH.search(query)
        or _FLAG.search(query)
        or _BACKTICKS.search(query)
        or _CODE_TOKEN.search(query)
        or _OUTPUT_WORDS.search(query)
    )
    return QueryIntent(
        asks_when=bool(_WHEN.search(query)),
        asks_for_request=bool(_REQUEST.search(query)),
        wants_output=wants_output,
        wants_injected=bool(_INJECTED_WORDS.search(query)),
        quoted=quoted,
    )
