"""Markdown-ish text cut into regions, each scanned for what can appear there: prose (what
people write), tool output, code blocks by language, shell scripts."""

from __future__ import annotations

import re
from collections.abc import Iterator

from sessions.enrich.entities.code_names import (
    scan_backticked_name,
    scan_calls,
    scan_class_defs,
    scan_function_defs,
    scan_identifiers,
)
from sessions.enrich.entities.commands import (
    AIDER_RUN,
    PROMPT_LINE,
    add_command,
    command_of,
    heredocs,
    inline_command,
)
from sessions.enrich.entities.errors import scan_errors
from sessions.enrich.entities.files import scan_files, scan_special_files
from sessions.enrich.entities.packages import INSTALL_LINE, scan_imports, scan_installs
from sessions.enrich.entities.scan import LINES, Scan, char, has
from sessions.enrich.entities.urls import scan_urls
from sessions.enrich.text import word_set

_SHELL_LANGS = word_set("bash sh shell zsh fish ksh powershell pwsh ps1 cmd bat")
_CONSOLE_LANGS = word_set("console terminal shell-session shellsession sh-session")
_PROSE_LANGS = word_set("markdown md mdx")
# Blocks read like tool output (paths need no quotes; no "name()" mentions): logs and config.
_OUTPUT_LANGS = word_set(
    "text txt output log plaintext plain dockerfile docker yaml yml toml ini cfg conf env "
    "dotenv properties makefile make gitignore nginx apache csv tsv"
)
_FENCE_OPEN = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n`]*$", re.M)
_INLINE_CODE = re.compile(r"`([^`\n]{1,300})`(?!`)")


def scan_shell(scan: Scan, text: str, base: int, *, console: bool, commands: bool) -> None:
    """A shell script: its lines as COMMANDs (``commands``), the files, URLs and installed
    packages in it; here-document bodies are scanned as code."""
    # A console transcript (``$ `` prompts) in a code block; a tool call's script never is.
    prompted = console or (
        commands and has(text, "$ ", "$\t") and bool(re.search(r"^[ \t]*\$[ \t]", text, re.M))
    )
    pieces = []
    position = 0
    for start, end in heredocs(scan, text):
        pieces.append((position, start))
        scan_region(scan, text[start:end], base + start, "code")
        position = end
    pieces.append((position, len(text)))
    for piece_start, piece_end in pieces:
        piece = text[piece_start:piece_end]
        if prompted:
            for match in scan.each(PROMPT_LINE.finditer(piece)):
                command = command_of(match.group(1))
                at = piece_start + match.start(1)
                if command:
                    add_command(scan, command, base + at + match.group(1).find(command))
                scan_urls(scan, match.group(1), base + at)
                scan_files(scan, match.group(1), base + at, code=False)
            continue
        if commands:
            pending: list[str] = []  # the lines of a command continued with a backslash
            pending_at = 0
            for match in scan.each(LINES.finditer(piece)):
                line = match.group().rstrip("\r")
                if not pending:
                    pending_at = piece_start + match.start()
                if line.endswith("\\"):
                    pending.append(line[:-1].strip())
                    continue
                joined = " ".join([*pending, line.strip()]) if pending else match.group()
                pending = []
                command = command_of(joined)
                if command:
                    add_command(scan, command, base + pending_at + max(joined.find(command), 0))
        else:
            for match in scan.each(INSTALL_LINE.finditer(piece)):
                line_end = piece.find("\n", match.start())
                line = piece[match.start() : line_end if line_end >= 0 else len(piece)]
                scan_installs(scan, line, base + piece_start + match.start())
        scan_urls(scan, piece, base + piece_start)
        scan_files(scan, piece, base + piece_start, code=False)


def _scan_inline_spans(scan: Scan, text: str, base: int, mode: str) -> None:
    if "`" not in text:
        return
    for match in scan.each(_INLINE_CODE.finditer(text)):
        if char(text, match.start() - 1) == "`":
            continue
        span = match.group(1)
        stripped = span.strip()
        if stripped.startswith("$ "):
            stripped = stripped[2:].lstrip()
        start = base + match.start(1) + span.find(stripped)
        if inline_command(stripped):
            add_command(scan, stripped, start)
            continue
        if re.match(r"(?:import|from)[ \t]", stripped):
            scan_imports(scan, stripped, start, code=False)
            continue
        scan_backticked_name(scan, text, match, stripped, start, prose=mode == "prose")


def scan_region(scan: Scan, text: str, base: int, mode: str) -> None:
    """One region: ``prose`` (what people write), ``output`` (what tools print), ``code``."""
    code = mode == "code"
    scan_special_files(scan, text, base, mode)
    scan_urls(scan, text, base)
    scan_files(scan, text, base, code=code)
    scan_errors(scan, text, base, output=mode == "output")
    scan_identifiers(scan, text, base)
    scan_class_defs(scan, text, base)
    scan_function_defs(scan, text, base, code)
    scan_imports(scan, text, base, code)
    if code:
        return
    if mode == "prose":
        scan_calls(scan, text, base)
    _scan_inline_spans(scan, text, base, mode)
    if has(text, "$ ", "% ", "$\t", "%\t"):
        for match in scan.each(PROMPT_LINE.finditer(text)):
            command = command_of(match.group(1))
            if command:
                add_command(scan, command, base + match.start(1) + match.group(1).find(command))
    if "Run shell command?" in text:
        for match in scan.each(AIDER_RUN.finditer(text)):
            command = command_of(match.group(1))
            if command:
                add_command(scan, command, base + match.start(1) + match.group(1).find(command))


def _fenced(text: str) -> Iterator[tuple[int, int, str | None]]:
    """(start, end, language) pieces of ``text``; language None outside code fences."""
    position = 0
    while True:
        opening = _FENCE_OPEN.search(text, position)
        if not opening:
            break
        fence = opening.group(1)
        language = opening.group(2).lower().strip("{}.")
        body_start = min(opening.end() + 1, len(text))
        closing = re.compile(
            rf"^[ \t]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t\r]*$", re.M
        ).search(text, body_start)
        body_end = closing.start() if closing else len(text)
        if opening.start() > position:
            yield position, opening.start(), None
        yield body_start, max(body_end, body_start), language
        if not closing:
            return
        position = closing.end()
    if position < len(text):
        yield position, len(text), None


def scan_text(scan: Scan, text: str, base: int, mode: str, depth: int = 0) -> None:
    """Markdown-ish text: prose (or tool output) with fenced blocks by language."""
    if "```" not in text and "~~~" not in text:
        scan_region(scan, text, base, mode)
        return
    for start, end, language in scan.each(_fenced(text), cost=10):
        piece = text[start:end]
        if language is None:
            scan_region(scan, piece, base + start, mode)
        elif language in _SHELL_LANGS or language in _CONSOLE_LANGS:
            console = language in _CONSOLE_LANGS
            scan_shell(scan, piece, base + start, console=console, commands=True)
        elif language in _PROSE_LANGS and depth < 2:
            scan_text(scan, piece, base + start, mode, depth + 1)
        elif language in _OUTPUT_LANGS or language == "":
            scan_region(scan, piece, base + start, "output")
        else:
            scan_region(scan, piece, base + start, "code")
