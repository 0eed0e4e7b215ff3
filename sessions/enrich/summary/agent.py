"""The parts of an agent session's summary: the task (the first real user request), what was
done (files edited, commands run, tools used, commits, the best assistant sentences) and the
outcome (the last test run's status and/or the last assistant conclusion).

Injected messages (skill preambles, AGENTS.md, reminders) and system messages are never read
for sentences; tool output is read only for the status of a call.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from sessions.enrich.summary.render import short_command, short_path
from sessions.enrich.summary.textrank import (
    FILLER,
    PLAN,
    candidate_sentences,
    rank_sentences,
    similar,
)
from sessions.enrich.summary.tool_calls import (
    LOOKUP_TOOL,
    LOW_SIGNAL_TOOLS,
    TEST_COMMAND,
    TEST_TOOL,
    command_line,
    command_rank,
    edited_files,
    find_result,
    result_status,
)
from sessions.enrich.text import capitalize, content_words, fit_words, prose_sentences, strip_end
from sessions.enrich.transcript import attr, is_injected, metadata_of
from transcripts.shell_tools import is_shell_tool

_GREETING = re.compile(
    r"^(?:hi|hello|hey|hiya|howdy|good (?:morning|afternoon|evening)|greetings|thanks?"
    r"|thank you|ok(?:ay)?|yo|sure|great)(?: there| again| all| everyone| team)?[\s,!.]*"
    r"(?:[A-Z][a-z]+[\s,!.]*)?$",
    re.I,
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
    sentences = [strip_end(s) for s in prose_sentences(text, 3000) if s.strip()]
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
    request = capitalize(request)
    if pick > 0:
        context = sentences[pick - 1]
        context = context[:1].lower() + context[1:] if context[1:2].islower() else context
        with_context = f"{request} ({context})"
        if len(with_context) <= max_chars:
            return with_context
    return fit_words(request, max_chars)


def first_request(messages: Sequence[Any], max_chars: int, *, roles=("user",)) -> str:
    """The first real request of one of ``roles``, condensed to one sentence."""
    for message in messages[:2000]:
        if attr(message, "role") not in roles or is_injected(message):
            continue
        request = _condense_request(str(attr(message, "content") or ""), max_chars)
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
        for sentence in prose_sentences(str(attr(messages[p], "content") or "")):
            if sentence.rstrip().endswith((":", "?")):
                continue
            sentence = strip_end(sentence)
            if (
                len(sentence.split()) >= 3
                and not FILLER.match(sentence)
                and not PLAN.search(sentence)
            ):
                return fit_words(sentence, max_chars)
    return ""


def _join_list(items: list[str], total: int) -> str:
    """ "a, b and c", or "a, b and 3 more" when ``items`` are the first of ``total``."""
    more = total - len(items)
    if more > 0:
        return f"{', '.join(items)} and {more} more"
    if len(items) > 1:
        return f"{', '.join(items[:-1])} and {items[-1]}"
    return items[0] if items else ""


def agent_parts(messages: Sequence[Any], max_chars: int) -> dict[str, Any]:
    """``{"done": ..., "outcome": ...}`` of an agent session: its actions and best sentences,
    and the last test run's status, the conclusion, the last commit or the last call's status."""
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
        role = attr(message, "role")
        if role == "assistant":
            if is_injected(message):
                continue
            tool_name = str(attr(message, "tool_name") or "")
            content = str(attr(message, "content") or "")
            if not tool_name:
                if content.strip():
                    prose_positions.append(pos)
                continue
            last_call = pos
            files = edited_files(tool_name, content)
            if files:
                for f in files:
                    edited[f] += 1
                    edit_order.setdefault(f, pos)
                continue
            if is_shell_tool(tool_name):
                command = command_line(content[:1000])
                if command:
                    n_commands += 1
                    commands[command] += 1
                    command_order.setdefault(command, pos)
                    if TEST_COMMAND.search(command):
                        last_test = pos
                continue
            if TEST_TOOL.search(tool_name):
                last_test = pos
            tools[tool_name] += 1
            tool_order.setdefault(tool_name, pos)
        elif role == "tool":
            meta = metadata_of(message)
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
        names = [short_path(f) for f in files[:4]]
        done.append((0, f"edited {_join_list(names, len(files))}"))
    if commands:
        ordered = sorted(commands, key=lambda c: (command_rank(c), -commands[c], command_order[c]))
        shown = [c for c in ordered if command_rank(c) < 3][:3] or ordered[:2]
        rendered = ", ".join(f"`{short_command(c)}`" for c in shown)
        extra = f" ({n_commands} commands)" if n_commands > len(shown) else ""
        done.append((1, f"ran {rendered}{extra}"))
    signal_tools = [t for t in tools if t.lower() not in LOW_SIGNAL_TOOLS]
    if signal_tools or (tools and not edited and not commands):
        # Tools that change something (book_reservation) before look-ups (get_user_details).
        shown_tools = sorted(
            signal_tools or tools, key=lambda t: (bool(LOOKUP_TOOL.match(t)), tool_order[t])
        )
        names = [f"{t} ×{tools[t]}" if tools[t] > 1 else t for t in shown_tools[:4]]
        done.append((3, f"used {_join_list(names, len(shown_tools))}"))
    if commits:
        done.append((4, "made 1 commit" if len(commits) == 1 else f"made {len(commits)} commits"))

    ranked = rank_sentences(candidate_sentences(messages, prose_positions, with_speaker=False))
    conclusion = _conclusion(messages, prose_positions, max_chars // 3, after=last_commit)
    picked: list[str] = []
    if any(not PLAN.search(r[3]) for r in ranked):
        ranked = [r for r in ranked if not PLAN.search(r[3])]
    taken = [content_words(conclusion)] if conclusion else []
    for _, _, _, sentence in ranked:
        text = strip_end(sentence)
        words = content_words(text)
        if any(similar(words, other) for other in taken):
            continue
        picked.append(text)
        taken.append(words)
        if len(picked) == 2:
            break
    for rank, sentence in enumerate(picked):
        done.append((2 if rank == 0 else 5, fit_words(sentence, max_chars // 3)))

    outcome: list[tuple[int, str]] = []
    if last_test is not None:
        result = find_result(messages, last_test)
        status, detail = result_status(result, test_run=True) if result is not None else ("", "")
        call = messages[last_test]
        tool_name = str(attr(call, "tool_name") or "")
        label = (
            command_line(str(attr(call, "content") or "")[:1000])
            if is_shell_tool(tool_name)
            else tool_name
        )
        label = short_command(label, 50)
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
        result = find_result(messages, last_call)
        status, detail = ("", "")
        if result is not None:
            status, detail = result_status(result, test_run=False)
        if status:
            call = messages[last_call]
            name = str(attr(call, "tool_name") or "tool")
            detail = f", {detail}" if detail else ""
            outcome.append((0, f"last tool call ({name}) {status}{detail}"))

    return {"done": done, "outcome": outcome}
