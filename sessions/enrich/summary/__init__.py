"""Session summaries (seed 003 "Context Compression"): task, actions, outcome, key entities.

Pure Python: no database, no Django. Messages are any objects (or dicts) with ``role``,
``content``, ``tool_name`` and optionally ``author`` and ``metadata``: ``ParsedMessage``
from the importers, ``sessions.models.Message`` rows, or test doubles.

``summarize`` is extractive and needs no model::

    Task: <the first real user request, as one sentence>. Done: <files edited, commands run,
    tools used, 1-2 top-scoring assistant sentences>. Outcome: <last test run's status and/or
    the last assistant conclusion>. Key entities: <up to 6 of the given entities>.

How it chooses:

* Injected messages (``metadata["injected"]``: skill preambles, AGENTS.md, reminders) and
  ``system`` messages are never read for sentences; nor are code blocks, diffs, SEARCH/REPLACE
  blocks, tables or tool output. Tool output is read only for the status of a test run.
* Actions come from the tool calls: ``Edit``/``Write``-style calls, ``apply_patch`` patches and
  aider's ``edited_files`` give the files; shell calls give the commands (test, build, install
  and commit commands first, read-only ones like ``ls``/``cat``/``sed -n`` last).
* Sentences are ranked with TextRank (Mihalcea & Tarau, 2004: PageRank over sentences, edges
  weighted by word overlap normalised by log lengths), with a small bonus for sentences that
  report a result ("fixed", "added", ...) and a penalty for plans ("Let me ..."). Only a sample
  is scored (the first 20, the last 40 and the 20 longest of the other assistant messages,
  at most 300 sentences), so a 100k-message session summarises in well under a second.
* A test run is a shell call whose command runs a test tool (pytest, jest, go test, cargo
  test, ...). Its status is read from the result: pytest/jest/cargo/unittest counts first,
  then ``FAIL``/``PASS`` markers, then the exit code, then ``is_error``.
* The text never exceeds ``max_chars``: lower-priority parts (entities, then the second
  sentence, tool names, commits, ...) are dropped first, then the task and the remaining
  parts are shortened at word boundaries (marked with "…").

Chat between people (no tool calls, speakers rather than user/assistant, like LoCoMo) keeps
the shape with other labels: ``Topic`` (key phrases), ``Discussed`` (the top sentences with
their speakers), ``Outcome`` (the last substantive line).

``llm_summary`` asks an OpenAI-compatible chat-completions endpoint instead, and
``summarize_with_fallback`` uses it when configured and falls back to ``summarize``.
"""

from __future__ import annotations

import http.client
import json
import logging
import math
import re
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

logger = logging.getLogger(__name__)

__all__ = [
    "SummaryError",
    "llm_summary",
    "summarize",
    "summarize_progressively",
    "summarize_with_fallback",
]

ELLIPSIS = "…"
MAX_ENTITIES = 6

# Sampling caps (speed on huge sessions).
_HEAD_MESSAGES = 20
_TAIL_MESSAGES = 40
_MIDDLE_MESSAGES = 20
_MIDDLE_CANDIDATES = 2000  # middle messages looked at (evenly spaced) to find the longest
_MAX_SENTENCES = 300
_MAX_READ = 6000  # characters of one message that are read for prose

# --------------------------------------------------------------------------------------------
# Text helpers (shared with sessions.enrich.topics)
# --------------------------------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# English stopwords plus words too common in chat and agent sessions to carry meaning.
STOPWORDS = _words(
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
_FENCE = re.compile(r"(?<![`~])(`{3,}|~{3,})(?![`~]).*?(?:(?<![`~])\1(?![`~])|\Z)", re.S)
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
_GREETING = re.compile(
    r"^(?:hi|hello|hey|hiya|howdy|good (?:morning|afternoon|evening)|greetings|thanks?"
    r"|thank you|ok(?:ay)?|yo|sure|great)(?: there| again| all| everyone| team)?[\s,!.]*"
    r"(?:[A-Z][a-z]+[\s,!.]*)?$",
    re.I,
)
_FILLER = re.compile(
    r"^(?:you'?re welcome|no problem|glad|happy to help|hope (?:this|that) helps|let me know"
    r"|feel free|if you (?:have|need) any|thanks?|thank you|great|perfect|awesome|done|sure"
    r"|talk (?:to you )?(?:soon|later)|see you|bye|take care|have a (?:good|great|nice)"
    r"|good ?night|cheers|sounds good|ok(?:ay)?|will do|catch you|safe travels|i hope you"
    r"|(?:by the way,? )?(?:take a look|look at this|check (?:this|it) out)|here you go"
    r"|please (?:confirm|let me know|provide|review)|would you like|do you want)\b",
    re.I,
)
_PLAN = re.compile(
    r"^(?:let me|let's|now let|i'll|i will|i'm going to|i am going to|next,? i|first,? i"
    r"|now i'll|i need to|i'm (?:checking|looking|reading|pulling|going)|i should)\b"
    r"|\bI(?: will|'ll|’ll) (?:provide|now|first|start|check|look|need)|^here (?:is|are)\b",
    re.I,
)
_LABEL_VALUE = re.compile(r"^[\w\s()/-]{1,30}:\s")
_RESULT = re.compile(
    r"\b(?:fixed|added|implemented|created|updated|removed|refactored|replaced|renamed|moved"
    r"|resolved|found|passes|passed|succeeded|works|completed|finished|migrated|wrote|booked"
    r"|changed|now)\b",
    re.I,
)
_STOP_MARK = re.compile(r"#{3}\s*STOP\s*#{3}", re.I)


def _attr(message: Any, name: str, default: Any = "") -> Any:
    if isinstance(message, Mapping):
        value = message.get(name, default)
    else:
        value = getattr(message, name, default)
    return default if value is None else value


def _call_id(message: Any) -> str:
    """The tool_call_id, or "" when a Django row was loaded without it (no query per row)."""
    deferred = getattr(message, "get_deferred_fields", None)
    if callable(deferred) and "tool_call_id" in deferred():
        return ""
    return str(_attr(message, "tool_call_id") or "")


def _meta(message: Any) -> Mapping[str, Any]:
    meta = _attr(message, "metadata", None)
    return meta if isinstance(meta, Mapping) else {}


def _is_injected(message: Any) -> bool:
    return bool(_meta(message).get("injected")) or _attr(message, "role") == "system"


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


def prose_segments(text: str, limit: int = _MAX_READ) -> list[str]:
    """Paragraphs/list items of readable prose in ``text``: no code, diffs, tables or tags."""
    if not text:
        return []
    text = text[: limit * 4]
    text = _STOP_MARK.sub(" ", text)
    text = _FENCE.sub("\n\n", text)
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


def prose_sentences(text: str, limit: int = _MAX_READ) -> list[str]:
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


def _content_words(sentence: str) -> set[str]:
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


def _strip_end(text: str) -> str:
    return text.strip().rstrip(".;,:!? ").strip()


def _capitalize(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


# --------------------------------------------------------------------------------------------
# TextRank over sentences
# --------------------------------------------------------------------------------------------


def textrank(sentences: Sequence[str], *, iterations: int = 30, damping: float = 0.85):
    """TextRank scores of ``sentences`` (word-overlap similarity, normalised by log lengths)."""
    words = [_content_words(s) for s in sentences]
    n = len(sentences)
    if n == 0:
        return []
    index: dict[str, list[int]] = {}
    for i, ws in enumerate(words):
        for w in ws:
            index.setdefault(w, []).append(i)
    edges: list[dict[int, float]] = [{} for _ in range(n)]
    for i, ws in enumerate(words):
        overlap: Counter[int] = Counter()
        for w in ws:
            postings = index[w]
            if len(postings) > n // 2 + 2 and n > 20:
                continue  # a word in most sentences links everything and says nothing
            for j in postings:
                if j > i:
                    overlap[j] += 1
        for j, common in overlap.items():
            norm = math.log(len(ws) + 1) + math.log(len(words[j]) + 1)
            weight = common / norm if norm else 0.0
            if weight > 0:
                edges[i][j] = weight
                edges[j][i] = weight
    out_weight = [sum(e.values()) for e in edges]
    scores = [1.0] * n
    for _ in range(iterations):
        scores = [
            (1 - damping)
            + damping
            * sum(w * scores[j] / out_weight[j] for j, w in edges[i].items() if out_weight[j])
            for i in range(n)
        ]
    return scores


def _similar(a: set[str], b: set[str], threshold: float = 0.5) -> bool:
    """Jaccard overlap of content words above ``threshold`` (near-duplicate sentences)."""
    if not a or not b:
        return a == b
    return len(a & b) / len(a | b) > threshold


def _usable(sentence: str) -> bool:
    words = sentence.split()
    if not 4 <= len(words) <= 45:
        return False
    if sentence.rstrip().endswith(("?", ":")):
        return False
    letters = sum(ch.isalpha() for ch in sentence)
    if letters / max(len(sentence), 1) < 0.6:
        return False
    return not _FILLER.match(sentence)


def _ranked(candidates: list[tuple[int, str, str]]) -> list[tuple[float, int, str, str]]:
    """(score, position, speaker, sentence) best first, from (position, speaker, sentence)."""
    if not candidates:
        return []
    scores = textrank([s for _, _, s in candidates])
    ranked = []
    for (pos, speaker, sentence), score in zip(candidates, scores, strict=True):
        if _PLAN.search(sentence):
            score *= 0.4
        elif _RESULT.search(sentence):
            score *= 1.3
        if not sentence.rstrip("\"')]”’").endswith((".", "!")):
            score *= 0.6  # list items, headings, fragments
        if _LABEL_VALUE.match(sentence):
            score *= 0.5  # "Total price: $241"
        score *= min(1.0, len(sentence.split()) / 8)  # short lines say little
        ranked.append((score, pos, speaker, sentence))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return ranked


def _sample_positions(positions: list[int], lengths: Mapping[int, int]) -> list[int]:
    """The first, the last and the longest middle positions, in order."""
    if len(positions) <= _HEAD_MESSAGES + _TAIL_MESSAGES + _MIDDLE_MESSAGES:
        return positions
    head = positions[:_HEAD_MESSAGES]
    tail = positions[-_TAIL_MESSAGES:]
    middle = positions[_HEAD_MESSAGES:-_TAIL_MESSAGES]
    step = max(1, len(middle) // _MIDDLE_CANDIDATES)
    pool = middle[::step]
    longest = sorted(pool, key=lambda p: (-lengths.get(p, 0), p))[:_MIDDLE_MESSAGES]
    return head + sorted(longest) + tail


def _candidate_sentences(
    messages: Sequence[Any], positions: list[int], *, with_speaker: bool
) -> list[tuple[int, str, str]]:
    lengths = {p: len(_attr(messages[p], "content")) for p in positions}
    chosen = _sample_positions(positions, lengths)
    per_message = max(3, _MAX_SENTENCES // max(len(chosen), 1))
    out: list[tuple[int, str, str]] = []
    for p in chosen:
        message = messages[p]
        speaker = _speaker(message) if with_speaker else ""
        usable = [s for s in prose_sentences(_attr(message, "content")) if _usable(s)]
        for k, sentence in enumerate(usable[:per_message]):
            out.append((p * 1000 + k, speaker, sentence))
    return out[: _MAX_SENTENCES * 2]


def _speaker(message: Any) -> str:
    author = str(_attr(message, "author") or "").strip()
    return author or str(_attr(message, "role") or "")


# --------------------------------------------------------------------------------------------
# Actions and outcomes from tool calls
# --------------------------------------------------------------------------------------------

_SHELL_TOOLS = {
    "bash", "shell", "exec", "exec_command", "local_shell", "container.exec", "run_command",
    "run_shell_command", "execute_command", "terminal", "run_terminal_cmd", "powershell",
}  # fmt: skip
_LOW_SIGNAL_TOOLS = {
    "read", "read_file", "view", "view_file", "glob", "grep", "ls", "list", "list_dir",
    "list_files", "search", "search_files", "todowrite", "todoread", "think", "skill",
    "webfetch", "websearch", "web_search", "fetch", "find", "codebase_search", "file_search",
    "update_plan", "task", "agent", "exitplanmode",
}  # fmt: skip
_LOOKUP_TOOL = re.compile(
    r"^(?:get|search|list|find|fetch|read|lookup|look_up|query|calculate|check|view|show"
    r"|describe|retrieve|load)(?:_|$)",
    re.I,
)
_EDIT_HEAD = re.compile(r"^(?:Edit notebook|Edit|Write|Create|MultiEdit)\s+(\S+)")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File:\s*(\S+)", re.M)
_PATH_FIELD = re.compile(r"^(?:path|file_path|file|filename|target_file):\s*(\S+)", re.M)
_TEST_COMMAND = re.compile(
    r"(?:^|[\s;&|(/])(?:pytest|py\.test|tox|nox|jest|vitest|mocha|ava|karma|rspec|phpunit"
    r"|ctest|unittest|nosetests|(?:go|cargo|npm|pnpm|yarn|bun|deno|mvn|gradle|gradlew"
    r"|dotnet|mix|swift|flutter|dart|make|just|manage\.py|django-admin|rake|bundle exec rake)"
    r"\s+(?:run\s+)?(?:-\S+\s+)*test\w*|npm t\b)",
)
_TEST_TOOL = re.compile(r"test", re.I)
_READ_ONLY_COMMAND = re.compile(
    r"^(?:ls|ll|cat|head|tail|less|more|sed -n|grep|rg|ag|find|fd|pwd|echo|printf|cd|wc"
    r"|tree|which|type|file|stat|du|df|env|printenv|whoami|date|true|nl|awk|sort|uniq"
    r"|git (?:status|log|diff|show|branch|remote|config --get|rev-parse|blame)|jq|bat)\b"
)
_SIGNIFICANT_COMMAND = re.compile(
    r"^(?:git (?:commit|push|merge|rebase|checkout -b|switch -c|tag|apply|revert|cherry-pick)"
    r"|(?:pip|pip3|uv|poetry|npm|pnpm|yarn|bun|cargo|go|apt|apt-get|brew|gem|composer)"
    r" (?:install|add|remove|uninstall|build|publish|run|sync|get|i)\b"
    r"|make\b|docker|kubectl|terraform|alembic|ruff|black|mypy|eslint|prettier|tsc|cmake"
    r"|python|python3|node|npx|uvx|cp|mv|rm|mkdir|chmod|curl|wget)"
)
_COUNTS = re.compile(
    r"(\d+)\s+(passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|pending"
    r"|todo|tests? passed|tests? failed)\b",
    re.I,
)
_EXIT_CODE = re.compile(
    r"(?:exited with code|exit code:?|exit status:?|returncode[=:]?)\s*(-?\d+)", re.I
)


def _short_path(path: str) -> str:
    path = path.strip("`'\"").rstrip(":,;")
    if len(path) <= 40:
        return path
    parts = [p for p in re.split(r"[/\\]", path) if p]
    return "/".join(parts[-2:]) if len(parts) >= 2 else path[-40:]


def _command_line(content: str) -> str:
    for line in content.strip().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            line = re.sub(r"^cd\s+\S+\s*(?:&&|;)\s*", "", line)
            return line
    return ""


def _is_shell_call(tool_name: str) -> bool:
    name = tool_name.lower()
    return name in _SHELL_TOOLS or any(h in name for h in ("bash", "shell", "terminal", "exec"))


def _edited_files(tool_name: str, content: str) -> list[str]:
    head = content[:2000]
    match = _EDIT_HEAD.match(head)
    if match:
        return [match.group(1)]
    patched = _PATCH_FILE.findall(head if "*** Begin Patch" not in content else content[:20000])
    if patched:
        return patched
    name = tool_name.lower()
    if any(k in name for k in ("edit", "write", "create", "replace", "patch", "insert")):
        field = _PATH_FIELD.search(head)
        if field:
            return [field.group(1)]
    return []


def _command_rank(command: str) -> int:
    """0 tests, 1 builds/installs/commits/file operations, 2 other, 3 scripts, 4 read-only."""
    if _TEST_COMMAND.search(command):
        return 0
    if _SIGNIFICANT_COMMAND.match(command):
        return 1
    if _READ_ONLY_COMMAND.match(command):
        return 4
    if re.match(r"^(?:[A-Za-z_]\w*=|if |for |while |case |\{|\(|export )", command):
        return 3
    return 2


def _short_command(command: str, max_chars: int = 60) -> str:
    """A command with long paths shortened to their last component, cut at a word."""
    words = []
    for word in command.split():
        if len(word) > 25 and "/" in word.strip("/"):
            last = [p for p in word.split("/") if p][-1]
            word = "…/" + (last if len(last) <= 30 else last[:20] + "…")
        words.append(word)
    return fit_words(" ".join(words), max_chars)


def _result_status(result: Any, *, test_run: bool) -> tuple[str, str]:
    """(status, detail) of a tool result: status in passed/failed/error (tests) or ok/failed/
    error (other calls); ``("", "")`` when nothing tells."""
    meta = _meta(result)
    content = str(_attr(result, "content") or "")
    tail = content[-3000:]
    ok_word, fail_word = ("passed", "failed") if test_run else ("ok", "failed")
    if test_run:
        counts: dict[str, int] = {}
        for number, label in _COUNTS.findall(tail):
            key = label.lower().split()[-1].rstrip("s")
            key = {"passe": "passed", "faile": "failed"}.get(key, key)
            if key in ("passed", "failed", "error"):
                counts[key] = int(number)
        detail = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()) if v)
        if counts.get("failed"):
            return "failed", detail
        if counts.get("error"):
            return "error", detail
        if counts.get("passed"):
            return "passed", detail
        if re.search(r"^(?:FAIL|FAILED|--- FAIL)\b|test result: FAILED|\bFAILED \(", tail, re.M):
            return "failed", ""
        if re.search(r"^(?:PASS|OK|ok\s)\b|test result: ok|\bAll tests passed", tail, re.M):
            return "passed", ""
    code: int | None = None
    for key in ("exit_code", "returncode", "exitCode"):
        if isinstance(meta.get(key), int):
            code = meta[key]
            break
    if code is None:
        found = _EXIT_CODE.search(content[:400]) or _EXIT_CODE.search(tail)
        if found:
            code = int(found.group(1))
    if code is not None:
        return (ok_word, "") if code == 0 else (fail_word, f"exit {code}")
    if meta.get("is_error") is True or meta.get("status") in ("error", "failed"):
        return "error", ""
    if re.match(r"^\s*(?:Error|Exception|Traceback|fatal)\b", content):
        return "error", ""
    if meta.get("is_error") is False or meta.get("status") in ("ok", "success", "completed"):
        return ok_word, ""
    return "", ""


def _find_result(messages: Sequence[Any], call_pos: int) -> Any | None:
    call_id = _call_id(messages[call_pos])
    first_tool = None
    for pos in range(call_pos + 1, min(len(messages), call_pos + 200)):
        message = messages[pos]
        if _attr(message, "role") != "tool":
            continue
        result_id = _call_id(message) if call_id else ""
        if call_id and result_id == call_id:
            return message
        if first_tool is None and not result_id:
            first_tool = message
    return first_tool


# --------------------------------------------------------------------------------------------
# Building the summary
# --------------------------------------------------------------------------------------------


def _entity_pairs(entities: Iterable[Any]) -> list[tuple[str, str, int]]:
    pairs: list[tuple[str, str, int]] = []
    for entity in entities or ():
        if isinstance(entity, tuple | list) and len(entity) >= 2:
            etype, value = entity[0], entity[1]
            count = entity[2] if len(entity) > 2 and isinstance(entity[2], int) else 1
        else:
            etype, value = _attr(entity, "type"), _attr(entity, "value")
            count = _attr(entity, "count", 1)
            count = count if isinstance(count, int) else 1
        etype = str(getattr(etype, "value", etype) or "").upper()
        value = str(value or "").strip()
        if value:
            pairs.append((etype, value, count))
    return pairs


def key_entities(entities: Iterable[Any], limit: int = MAX_ENTITIES) -> list[str]:
    """Up to ``limit`` entity values: most counted first, taking the types in turn."""
    by_type: dict[str, list[tuple[int, int, str]]] = {}
    seen: set[str] = set()
    for order, (etype, value, count) in enumerate(_entity_pairs(entities)):
        key = value.lower()
        if key in seen:
            continue
        seen.add(key)
        by_type.setdefault(etype, []).append((-count, order, value))
    queues = [sorted(items) for items in by_type.values()]
    chosen: list[str] = []
    while len(chosen) < limit and any(queues):
        for queue in queues:
            if queue and len(chosen) < limit:
                value = queue.pop(0)[2]
                chosen.append(_short_path(value) if "/" in value else fit_words(value, 60))
    return chosen


def _is_chat_between_people(messages: Sequence[Any]) -> bool:
    roles: Counter[str] = Counter()
    authors: dict[str, set[str]] = {}
    for message in messages[:5000]:
        if _is_injected(message):
            continue
        role = _attr(message, "role")
        if role == "tool" or _attr(message, "tool_name"):
            return False
        roles[role] += 1
        author = str(_attr(message, "author") or "").strip()
        if author:
            authors.setdefault(role, set()).add(author)
    if not roles:
        return False
    if len(roles) == 1 and ("user" not in roles or len(authors.get("user", ())) >= 2):
        return True
    if any(len(names) >= 2 for names in authors.values()):
        return True
    assistant_names = authors.get("assistant", set())
    return bool(assistant_names) and all(
        re.fullmatch(r"[A-Z][a-z]+(?: [A-Z][a-z]+)?", name) for name in assistant_names
    )


_REQUEST = re.compile(
    r"^(?:please|pls|kindly|can you|could you|would you|will you|help me|i (?:want|need|would"
    r" like|'d like)|we (?:need|want|should)|let's|implement|add|fix|create|write|make|build"
    r"|update|refactor|remove|rename|change|migrate|debug|investigate|find|explain|review"
    r"|set up|setup|install|run|test|check|improve|convert|move|delete|design|document"
    r"|generate|summari[sz]e|translate|optimi[sz]e|clean up|upgrade|deploy|apply|prepare)\b"
    r"|\bplease\b",
    re.I,
)


def _condense_request(text: str, max_chars: int) -> str:
    """One sentence for the request in ``text``: its first request-like sentence (of the
    first three), with the sentence before it as context in parentheses when it fits."""
    sentences = [_strip_end(s) for s in prose_sentences(text, 3000) if s.strip()]
    sentences = [s for s in sentences if s]
    while sentences and _GREETING.match(sentences[0] + "."):
        sentences.pop(0)
    if not sentences:
        return ""
    pick = next((i for i, s in enumerate(sentences[:3]) if _REQUEST.search(s)), 0)
    request = sentences[pick]
    if pick == 0 and len(request.split()) < 5 and len(sentences) > 1:
        request = f"{request}: {sentences[1]}"
    request = re.sub(r"^(?:please|pls|kindly)\s*,?\s+", "", request, flags=re.I)
    request = _capitalize(request)
    if pick > 0:
        context = sentences[pick - 1]
        context = context[:1].lower() + context[1:] if context[1:2].islower() else context
        with_context = f"{request} ({context})"
        if len(with_context) <= max_chars:
            return with_context
    return fit_words(request, max_chars)


def _first_request(messages: Sequence[Any], max_chars: int, *, roles=("user",)) -> str:
    for message in messages[:2000]:
        if _attr(message, "role") not in roles or _is_injected(message):
            continue
        request = _condense_request(str(_attr(message, "content") or ""), max_chars)
        if len(request.split()) >= 2:
            return request
    return ""


def _conclusion(
    messages: Sequence[Any], positions: list[int], max_chars: int, after: int = -1
) -> str:
    """The first statement of the last assistant message, or of the one before it when the
    last has none (only if nothing was committed since: ``after``)."""
    for rank, p in enumerate(reversed(positions[-2:])):
        if rank and p < after:
            break
        for sentence in prose_sentences(str(_attr(messages[p], "content") or "")):
            if sentence.rstrip().endswith((":", "?")):
                continue
            sentence = _strip_end(sentence)
            if (
                len(sentence.split()) >= 3
                and not _FILLER.match(sentence)
                and not _PLAN.search(sentence)
            ):
                return fit_words(sentence, max_chars)
    return ""


def _join_list(items: list[str], total: int) -> str:
    more = total - len(items)
    if more > 0:
        return f"{', '.join(items)} and {more} more"
    if len(items) > 1:
        return f"{', '.join(items[:-1])} and {items[-1]}"
    return items[0] if items else ""


def _agent_parts(messages: Sequence[Any], max_chars: int) -> dict[str, Any]:
    edited: Counter[str] = Counter()
    edit_order: dict[str, int] = {}
    commands: Counter[str] = Counter()
    command_order: dict[str, int] = {}
    tools: Counter[str] = Counter()
    tool_order: dict[str, int] = {}
    commits: list[str] = []
    last_commit = -1
    prose_positions: list[int] = []
    last_test: int | None = None
    last_call: int | None = None
    n_commands = 0

    for pos, message in enumerate(messages):
        role = _attr(message, "role")
        if role == "assistant":
            if _is_injected(message):
                continue
            tool_name = str(_attr(message, "tool_name") or "")
            content = str(_attr(message, "content") or "")
            if not tool_name:
                if content.strip():
                    prose_positions.append(pos)
                continue
            last_call = pos
            files = _edited_files(tool_name, content)
            if files:
                for f in files:
                    edited[f] += 1
                    edit_order.setdefault(f, pos)
                continue
            if _is_shell_call(tool_name):
                command = _command_line(content[:1000])
                if command:
                    n_commands += 1
                    commands[command] += 1
                    command_order.setdefault(command, pos)
                    if _TEST_COMMAND.search(command):
                        last_test = pos
                continue
            if _TEST_TOOL.search(tool_name):
                last_test = pos
            tools[tool_name] += 1
            tool_order.setdefault(tool_name, pos)
        elif role == "tool":
            meta = _meta(message)
            for f in meta.get("edited_files") or ():
                if isinstance(f, str):
                    edited[f] += 1
                    edit_order.setdefault(f, pos)
            for commit in meta.get("commits") or ():
                if isinstance(commit, Mapping) and commit.get("message"):
                    commits.append(str(commit["message"]))
                    last_commit = pos

    done: list[tuple[int, str]] = []  # (priority: lower survives longer, text)
    if edited:
        files = sorted(edited, key=lambda f: (-edited[f], edit_order[f]))
        names = [_short_path(f) for f in files[:4]]
        done.append((0, f"edited {_join_list(names, len(files))}"))
    if commands:
        ordered = sorted(commands, key=lambda c: (_command_rank(c), -commands[c], command_order[c]))
        shown = [c for c in ordered if _command_rank(c) < 3][:3] or ordered[:2]
        rendered = ", ".join(f"`{_short_command(c)}`" for c in shown)
        extra = f" ({n_commands} commands)" if n_commands > len(shown) else ""
        done.append((1, f"ran {rendered}{extra}"))
    signal_tools = [t for t in tools if t.lower() not in _LOW_SIGNAL_TOOLS]
    if signal_tools or (tools and not edited and not commands):
        # Tools that change something (book_reservation) before look-ups (get_user_details).
        shown_tools = sorted(
            signal_tools or tools, key=lambda t: (bool(_LOOKUP_TOOL.match(t)), tool_order[t])
        )
        names = [f"{t} ×{tools[t]}" if tools[t] > 1 else t for t in shown_tools[:4]]
        done.append((3, f"used {_join_list(names, len(shown_tools))}"))
    if commits:
        done.append((4, "made 1 commit" if len(commits) == 1 else f"made {len(commits)} commits"))

    ranked = _ranked(_candidate_sentences(messages, prose_positions, with_speaker=False))
    conclusion = _conclusion(messages, prose_positions, max_chars // 3, after=last_commit)
    picked: list[str] = []
    if any(not _PLAN.search(r[3]) for r in ranked):
        ranked = [r for r in ranked if not _PLAN.search(r[3])]
    taken = [_content_words(conclusion)] if conclusion else []
    for _, _, _, sentence in ranked:
        text = _strip_end(sentence)
        words = _content_words(text)
        if any(_similar(words, other) for other in taken):
            continue
        picked.append(text)
        taken.append(words)
        if len(picked) == 2:
            break
    for rank, sentence in enumerate(picked):
        done.append((2 if rank == 0 else 5, fit_words(sentence, max_chars // 3)))

    outcome: list[tuple[int, str]] = []
    if last_test is not None:
        result = _find_result(messages, last_test)
        status, detail = _result_status(result, test_run=True) if result is not None else ("", "")
        call = messages[last_test]
        tool_name = str(_attr(call, "tool_name") or "")
        label = (
            _command_line(str(_attr(call, "content") or "")[:1000])
            if _is_shell_call(tool_name)
            else tool_name
        )
        label = _short_command(label, 50)
        if status:
            detail = f", {detail}" if detail else ""
            outcome.append((0, f"tests {status} (`{label}`{detail})"))
        else:
            outcome.append((0, f"tests run (`{label}`), status unknown"))
    if conclusion:
        outcome.append((1, conclusion))
    if not outcome and commits:
        outcome.append((1, f"last commit \u201c{fit_words(commits[-1], 80)}\u201d"))
    if not outcome and last_call is not None:
        result = _find_result(messages, last_call)
        status, detail = ("", "")
        if result is not None:
            status, detail = _result_status(result, test_run=False)
        if status:
            call = messages[last_call]
            name = str(_attr(call, "tool_name") or "tool")
            detail = f", {detail}" if detail else ""
            outcome.append((0, f"last tool call ({name}) {status}{detail}"))

    return {"done": done, "outcome": outcome}


def _chat_parts(messages: Sequence[Any], max_chars: int) -> dict[str, Any]:
    positions = [
        p
        for p, m in enumerate(messages)
        if not _is_injected(m) and str(_attr(m, "content") or "").strip()
    ]
    ranked = _ranked(_candidate_sentences(messages, positions, with_speaker=True))
    picked: list[tuple[int, str, str]] = []
    speakers: set[str] = set()
    taken: list[set[str]] = []
    for _, pos, speaker, sentence in ranked:
        if len(picked) == 2:
            break
        words = _content_words(sentence)
        if any(_similar(words, other) for other in taken):
            continue
        if len(picked) == 1 and speaker in speakers and len(ranked) > 4:
            # Prefer a second speaker when the first pick's speaker has the next best line.
            others = [r for r in ranked if r[2] not in speakers]
            if others:
                _, pos, speaker, sentence = others[0]
        picked.append((pos, speaker, _strip_end(sentence)))
        taken.append(_content_words(sentence))
        speakers.add(speaker)
    picked.sort()
    done = [
        (i, f"{speaker} said \u201c{fit_words(sentence, max_chars // 3)}\u201d")
        if speaker
        else (i, fit_words(sentence, max_chars // 3))
        for i, (_, speaker, sentence) in enumerate(picked)
    ]
    outcome: list[tuple[int, str]] = []
    for p in reversed(positions[-8:]):
        line = next(
            (
                _strip_end(s)
                for s in prose_sentences(str(_attr(messages[p], "content") or ""))
                if len(s.split()) >= 4 and not _FILLER.match(s) and not s.rstrip().endswith("?")
            ),
            "",
        )
        if line:
            speaker = _speaker(messages[p])
            text = fit_words(line, max_chars // 3)
            outcome.append((0, f"{speaker}: \u201c{text}\u201d" if speaker else text))
            break
    return {"done": done, "outcome": outcome}


def _chat_topic(messages: Sequence[Any], max_chars: int) -> str:
    from sessions.enrich.topics import key_phrases  # topics imports this module's helpers

    phrases = key_phrases(messages, limit=4)
    return fit_words(", ".join(phrases), max_chars) if phrases else ""


def _sentence_end(text: str) -> str:
    text = _strip_end(text)
    return text if text.endswith(ELLIPSIS) else f"{text}."


def _render(
    head_label: str,
    head: str,
    done_label: str,
    done: list[tuple[int, str]],
    outcome: list[tuple[int, str]],
    entities: list[str],
) -> str:
    parts = []
    if head:
        parts.append(f"{head_label}: {_sentence_end(head)}")
    if done:
        parts.append(f"{done_label}: {_sentence_end('; '.join(_strip_end(t) for _, t in done))}")
    if outcome:
        parts.append(f"Outcome: {_sentence_end('; '.join(_strip_end(t) for _, t in outcome))}")
    if entities:
        parts.append(f"Key entities: {_sentence_end(', '.join(entities))}")
    return " ".join(parts)


def _fit_summary(
    head_label: str,
    head: str,
    done_label: str,
    done: list[tuple[int, str]],
    outcome: list[tuple[int, str]],
    entities: list[str],
    max_chars: int,
) -> str:
    """Render the parts that fit in ``max_chars``, adding them from the most to the least
    important: the task, the outcome's status, edits, commands, the conclusion, the best
    sentence, three entities, other actions, the other entities, the second sentence.
    A part that does not fit whole is shortened at a word boundary when at least 40
    characters of it fit, and left out otherwise. Sections keep their order."""
    head = fit_words(head, 160)
    # (importance, section, position, text): lower importance is added first.
    parts: list[tuple[float, int, int, str]] = []
    for i, (priority, text) in enumerate(outcome):
        parts.append((0.5 if priority == 0 else 3.5, 1, i, fit_words(text, 140)))
    for i, (priority, text) in enumerate(done):
        importance = {0: 1, 1: 2, 2: 4, 3: 6, 4: 6.5}.get(priority, 8)
        parts.append((importance, 0, i, fit_words(text, 140)))
    for i, name in enumerate(entities):
        parts.append((5 if i < 3 else 7, 2, i, name))
    parts.sort(key=lambda part: (part[0], part[1], part[2]))

    def render(chosen: list[tuple[float, int, int, str]], head_text: str) -> str:
        ordered = sorted(chosen, key=lambda part: (part[1], part[2]))
        return _render(
            head_label,
            head_text,
            done_label,
            [(0, t) for _, section, _, t in ordered if section == 0],
            [(0, t) for _, section, _, t in ordered if section == 1],
            [t for _, section, _, t in ordered if section == 2],
        )

    if len(render([], head)) > max_chars:
        # Only (part of) the task fits: keep the label while a word of the task fits too.
        short = fit_words(head, max_chars - len(head_label) - 2)
        if short and short != ELLIPSIS and len(short.split()[0].rstrip(ELLIPSIS)) > 1:
            return f"{head_label}: {short}"
        return fit_words(head, max_chars)
    chosen: list[tuple[float, int, int, str]] = []
    for part in parts:
        trial = render([*chosen, part], head)
        if len(trial) <= max_chars:
            chosen.append(part)
            continue
        if part[1] == 2:
            continue  # an entity is shown whole or not at all
        room = len(part[3]) - (len(trial) - max_chars)
        if room >= 40:
            shorter = (part[0], part[1], part[2], fit_words(part[3], room))
            if len(render([*chosen, shorter], head)) <= max_chars:
                chosen.append(shorter)
    return fit_words(render(chosen, head), max_chars)


def _first_text(messages: Sequence[Any]) -> str:
    for allow_injected in (False, True):
        for message in messages[:5000]:
            if not allow_injected and _is_injected(message):
                continue
            content = str(_attr(message, "content") or "").strip()
            if not content:
                continue
            sentences = prose_sentences(content)
            return _strip_end(sentences[0]) if sentences else " ".join(content.split())[:300]
    return ""


def _summary_parts(messages: Sequence[Any], max_chars: int) -> dict[str, Any]:
    if _is_chat_between_people(messages):
        parts = _chat_parts(messages, max_chars)
        head = _chat_topic(messages, max_chars // 3)
        if not head:
            head = _first_request(messages, max_chars // 3, roles=("user", "assistant"))
        return {"head_label": "Topic", "head": head, "done_label": "Discussed", **parts}
    parts = _agent_parts(messages, max_chars)
    head = _first_request(messages, max(60, int(max_chars * 0.35)))
    return {"head_label": "Task", "head": head, "done_label": "Done", **parts}


def summarize(
    messages: Iterable[Any], *, entities: Iterable[Any] = (), max_chars: int = 600
) -> str:
    """An extractive summary of a session: Task, Done, Outcome, Key entities.

    ``messages`` are objects or dicts with role/content/tool_name (author and metadata are
    optional); ``entities`` are ``(type, value)`` pairs or objects with ``.type``/``.value``
    (and optionally ``.count``). The result is at most ``max_chars`` characters, cut only at
    word boundaries, and is non-empty whenever any message has text.
    """
    messages = messages if isinstance(messages, Sequence) else list(messages)
    max_chars = max(1, int(max_chars))
    if not any(str(_attr(m, "content") or "").strip() for m in messages):
        return ""
    parts = _summary_parts(messages, max_chars)
    head = parts["head"]
    if not head and not parts["done"] and not parts["outcome"]:
        head = _first_text(messages)
    text = _fit_summary(
        parts["head_label"] if head else "Task",
        head,
        parts["done_label"],
        parts["done"],
        parts["outcome"],
        key_entities(entities),
        max_chars,
    )
    return text or fit_words(_first_text(messages) or "Session", max_chars)


# --------------------------------------------------------------------------------------------
# Progressive summaries
# --------------------------------------------------------------------------------------------

_SECTION = re.compile(r"(?:^|(?<=\.) )(Task|Topic|Done|Discussed|Outcome|Key entities): ")


def _sections(summary: str) -> dict[str, str]:
    found = list(_SECTION.finditer(summary or ""))
    sections = {}
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(summary)
        sections[match.group(1)] = _strip_end(summary[match.end() : end])
    return sections


def summarize_progressively(previous_summary: str, new_messages: Iterable[Any], **kw: Any) -> str:
    """Update ``previous_summary`` with ``new_messages`` without re-reading the session.

    The rule:

    * **Task/Topic** stays the previous summary's: it is what the session was started for.
      (When the previous summary has none, the new messages' first request is used.)
    * **Done** lists the new messages' actions and sentences first; the previous summary's
      Done items follow while they fit, so earlier work fades out as the session grows.
    * **Outcome** is the new messages' (the latest test run / conclusion); the previous one
      is kept only when the new messages have none.
    * **Key entities** are the ``entities`` passed in (the caller's entities for the whole
      session); the previous ones are kept when none are passed.

    ``kw`` are ``summarize``'s keyword arguments (``entities``, ``max_chars``).
    """
    new_messages = new_messages if isinstance(new_messages, Sequence) else list(new_messages)
    max_chars = max(1, int(kw.get("max_chars", 600)))
    entities = kw.get("entities", ())
    previous = _sections(previous_summary or "")
    has_text = any(str(_attr(m, "content") or "").strip() for m in new_messages)
    if not previous and (previous_summary or "").strip():
        # Prose (an LLM's summary): its first sentence states the task.
        first = prose_sentences(previous_summary)
        previous = {"Task": _strip_end(first[0])} if first else {}
    if not previous:
        if not has_text:
            return fit_words(previous_summary or "", max_chars)
        return summarize(new_messages, entities=entities, max_chars=max_chars)
    parts = _summary_parts(new_messages, max_chars) if has_text else {"done": [], "outcome": []}
    head_label = "Topic" if "Topic" in previous else "Task"
    head = previous.get(head_label) or parts.get("head", "")
    done_label = "Discussed" if "Discussed" in previous else parts.get("done_label", "Done")
    done = list(parts["done"])
    known = {_strip_end(t).lower() for _, t in done}
    old_done = previous.get("Done") or previous.get("Discussed") or ""
    for item in (s.strip() for s in old_done.split("; ")):
        if item and item.lower() not in known:
            done.append((6, item))  # lowest priority: dropped first when space runs out
    outcome = list(parts["outcome"])
    if not outcome and previous.get("Outcome"):
        outcome = [(0, previous["Outcome"])]
    names = key_entities(entities)
    if not names and previous.get("Key entities"):
        names = [e.strip() for e in previous["Key entities"].split(", ") if e.strip()]
    text = _fit_summary(head_label, head, done_label, done, outcome, names, max_chars)
    return text or fit_words(previous_summary, max_chars)


# --------------------------------------------------------------------------------------------
# LLM summaries
# --------------------------------------------------------------------------------------------


class SummaryError(RuntimeError):
    """The LLM summary could not be made (HTTP error, timeout, bad answer)."""


LLM_TRANSCRIPT_CHARS = 24_000  # ~6k tokens: fits any current chat model with room to answer
LLM_MESSAGE_CHARS = 1_500
LLM_MAX_SUMMARY_CHARS = 2_000

_LLM_SYSTEM_PROMPT = (
    "You summarise transcripts of AI agent sessions for a team memory. Write a 2-4 sentence "
    "summary in plain prose (no lists, no headings) that states: the task the user asked "
    "for, the main actions taken (files edited, commands run, tools used), the outcome "
    "(e.g. tests passed or failed, what was delivered or left unresolved) and the key "
    "entities (files, functions, errors, packages). For a conversation between people, "
    "state its topic, what was discussed and how it ended. Answer with the summary only."
)


def _transcript(messages: Sequence[Any], max_chars: int = LLM_TRANSCRIPT_CHARS) -> str:
    lines = []
    for message in messages:
        if _is_injected(message):
            continue
        content = str(_attr(message, "content") or "").strip()
        if not content:
            continue
        role = str(_attr(message, "role") or "")
        tool_name = str(_attr(message, "tool_name") or "")
        author = str(_attr(message, "author") or "")
        label = role
        if tool_name:
            label = f"{role} ({'call' if role == 'assistant' else 'result'} {tool_name})"
        elif author and role in ("user", "assistant") and not re.search(r"\d|/", author):
            label = f"{author} ({role})" if role != "user" or author else role
        content = _FENCE.sub("[code]", content)
        limit = LLM_MESSAGE_CHARS if role != "tool" else 400
        if len(content) > limit:
            content = content[:limit] + f" [... {len(content) - limit} chars cut]"
        lines.append(f"{label}: {content}")
    total = sum(len(line) + 1 for line in lines)
    if total <= max_chars:
        return "\n".join(lines)
    # Keep the opening (the task) and as much of the end (the outcome) as fits.
    head_budget = max_chars // 3
    head: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > head_budget:
            break
        head.append(line)
        used += len(line) + 1
    tail: list[str] = []
    used_tail = 0
    for line in reversed(lines[len(head) :]):
        if used + used_tail + len(line) + 1 > max_chars - 60:
            break
        tail.append(line)
        used_tail += len(line) + 1
    tail.reverse()
    omitted = len(lines) - len(head) - len(tail)
    if not head and not tail:
        return lines[0][: max_chars - 60] + " [...]"
    return "\n".join([*head, f"[... {omitted} messages omitted ...]", *tail])


def llm_summary(
    messages: Iterable[Any], *, url: str, model: str, api_key: str, timeout: float = 30
) -> str:
    """A 2-4 sentence summary from an OpenAI-compatible ``POST {url}/chat/completions``.

    Raises ``SummaryError`` with a readable message on any failure.
    """
    messages = messages if isinstance(messages, Sequence) else list(messages)
    if not url or not model:
        raise SummaryError("LLM summary is not configured: url and model are required")
    if not url.lower().startswith(("http://", "https://")):
        raise SummaryError(f"LLM summary: {url!r} is not an http(s) URL")
    transcript = _transcript(messages)
    if not transcript:
        raise SummaryError("LLM summary: the session has no text to summarise")
    body = {
        "model": model,
        "messages": [
            {"role": "system", "content": _LLM_SYSTEM_PROMPT},
            {"role": "user", "content": f"Transcript:\n\n{transcript}\n\nSummary:"},
        ],
        "temperature": 0.2,
        "max_tokens": 300,
    }
    endpoint = url.rstrip("/") + "/chat/completions"
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(
        endpoint, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        detail = ""
        try:
            detail = exc.read(300).decode("utf-8", "replace").strip()
        except Exception:
            detail = ""
        detail = f": {detail}" if detail else ""
        raise SummaryError(f"LLM summary failed: HTTP {exc.code} from {endpoint}{detail}") from exc
    except (http.client.HTTPException, ValueError) as exc:
        raise SummaryError(f"LLM summary failed: bad answer or address {endpoint}: {exc}") from exc
    except (TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError) or "timed out" in str(reason):
            raise SummaryError(
                f"LLM summary failed: no answer from {endpoint} within {timeout:g}s"
            ) from exc
        raise SummaryError(f"LLM summary failed: cannot reach {endpoint}: {reason}") from exc
    try:
        data = json.loads(raw.decode("utf-8"))
        content = data["choices"][0]["message"]["content"]
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SummaryError(f"LLM summary failed: {endpoint} did not answer JSON") from exc
    except (KeyError, IndexError, TypeError) as exc:
        raise SummaryError(
            f"LLM summary failed: {endpoint} answered without choices[0].message.content"
        ) from exc
    if not isinstance(content, str) or not content.strip():
        raise SummaryError(f"LLM summary failed: {endpoint} answered an empty summary")
    text = re.sub(r"\s+", " ", content).strip()
    return fit_words(text, LLM_MAX_SUMMARY_CHARS)


def summarize_with_fallback(
    messages: Iterable[Any],
    *,
    entities: Iterable[Any] = (),
    llm: Mapping[str, Any] | None = None,
    max_chars: int = 600,
) -> tuple[str, str]:
    """``(summary, method)``: the LLM's when ``llm`` (url, model, api_key[, timeout]) is given
    and it answers, else the extractive one; method is ``"llm"`` or ``"extractive"``."""
    messages = messages if isinstance(messages, Sequence) else list(messages)
    entities = list(entities or ())
    if llm:
        try:
            text = llm_summary(
                messages,
                url=str(llm.get("url") or ""),
                model=str(llm.get("model") or ""),
                api_key=str(llm.get("api_key") or ""),
                timeout=float(llm.get("timeout") or 30),
            )
            return text, "llm"
        except SummaryError as exc:
            logger.warning("%s; using the extractive summary", exc)
    return summarize(messages, entities=entities, max_chars=max_chars), "extractive"
