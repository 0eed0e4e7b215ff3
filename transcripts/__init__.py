"""Transcripts: pure functions from the bytes of agents' session files to ``ParsedSession``s.

``parse(data, filename=..., format=...)`` is the entry point: it detects the format when
none is named and calls the format's parser. ``parse_path`` reads a file or a session
folder from disk. ``FORMATS`` (``transcripts.registry``) holds each format's declaration,
one module each in ``transcripts.formats``. Every failure is an ``ImportFormatError`` (with
``line`` and ``field`` when known). Nothing here touches the database or imports Django:
the server and the client (``memoryapp_client``) both stand on this package.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._drift import ParsedFile, collecting
from .base import ImportFormatError, ImportTooLarge, ParsedMessage, ParsedSession, UnzipLimits
from .detect import detect_format
from .format import Parser
from .formats.anthropic_session import TRANSCRIPT, folder_files, parse_anthropic_session
from .formats.ndjson_events import parse_events
from .formats.plain_text import preprocess_conversation
from .registry import FORMATS, supported_formats


def _options_of(parser: Parser) -> set[str]:
    return {
        name
        for name, parameter in inspect.signature(parser).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    }


def parse(
    data: bytes | Mapping[str, bytes],
    *,
    filename: str = "",
    format: str | None = None,
    unzip_limits: UnzipLimits | None = None,
    **options: Any,
) -> ParsedFile:
    """Parse ``data`` as ``format`` (detected from the content when None).

    ``options`` go to the format's parser (``input_history`` for aider); an option the
    format does not take is an error rather than silently ignored. A mapping of
    ``{filename: bytes}`` is an Anthropic session folder. ``unzip_limits`` bound what an
    archive may expand to, for the formats that come as one (``ImportTooLarge`` beyond).
    The answer is a list of sessions whose ``skipped`` counts what the file held that the
    format's importer does not know (``{reason: count}``, see ``_drift``).
    """
    if format is None:
        format = "anthropic_session" if isinstance(data, Mapping) else detect_format(data, filename)
    declared = FORMATS.get(format)
    if declared is None:
        raise ImportFormatError(
            f"unknown format {format!r}; known formats: {', '.join(FORMATS)}", field="format"
        )
    parser = declared.parse
    accepted = _options_of(parser)
    unknown = sorted(set(options) - accepted)
    if unknown:
        takes = f"it takes {', '.join(sorted(accepted))}" if accepted else "it takes none"
        raise ImportFormatError(
            f"format {format!r} does not take the option(s) {', '.join(unknown)}; {takes}",
            field=unknown[0],
        )
    if isinstance(data, Mapping) and format != "anthropic_session":
        raise ImportFormatError(f"format {format!r} takes the bytes of one file, not a mapping")
    if unzip_limits is not None and "unzip_limits" in accepted:
        options["unzip_limits"] = unzip_limits
    with collecting() as skipped:
        sessions = parser(data, **options)
    return _identified(_read_something(ParsedFile(sessions, skipped), format))


def parse_path(path: Path) -> ParsedFile:
    """Parse a transcript file, or an Anthropic session folder, from disk.

    A folder must hold ``transcript.jsonl`` (with ``metadata.json``/``events.jsonl``
    beside it). For an aider chat history, the sibling ``.aider.input.history`` is read
    too when it exists. What was skipped as unknown is on the answer's ``skipped``.
    """
    with collecting() as skipped:
        sessions = _parse_path(Path(path))
    return _identified(_read_something(ParsedFile(sessions, skipped), "its format"))


def _read_something(parsed: ParsedFile, format: str) -> ParsedFile:
    """``parsed``, unless all the file held was unknown to the importer: that is no drift
    but another format (or none), and the person must hear it rather than get nothing."""
    if parsed.skipped and not any(session.messages for session in parsed):
        found = ", ".join(f"{reason} ({count})" for reason, count in parsed.skipped.items())
        raise ImportFormatError(
            f"nothing in the file could be read as {format}: it holds only records this "
            f"importer does not know: {found}. Supported formats: {supported_formats()}"
        )
    return parsed


def _identified(parsed: ParsedFile) -> ParsedFile:
    """``parsed``, each session its format names no id for (plain text, an OpenAI message
    list, a conversation without a header …) given one from its content: the format and a
    digest of its messages. So importing the same file again (a client retrying a request
    whose answer was lost, a person uploading it twice) finds the sessions it stored rather
    than storing them twice, as it does for the formats with ids. The same conversation in
    two files is one session; a different or longer one is another."""
    for session in parsed:
        if session.external_id or not session.messages:
            continue
        digest = hashlib.sha256()
        for message in session.messages:
            line = [message.role, message.author, message.tool_name, message.content]
            digest.update(json.dumps(line, ensure_ascii=False).encode())
        session.external_id = f"{session.source_format}-{digest.hexdigest()[:32]}"
    return parsed


def _parse_path(path: Path) -> list[ParsedSession]:
    if path.is_dir():
        files = folder_files(path)
        if f"{path.name}/{TRANSCRIPT}" not in files:
            raise ImportFormatError(
                f"folder '{path}' is not a session folder: it has no {TRANSCRIPT}. "
                f"Supported formats: {supported_formats()}"
            )
        return parse_anthropic_session(files)
    if not path.is_file():
        raise ImportFormatError(f"no such file or folder: '{path}'")
    data = path.read_bytes()
    declared = FORMATS[detect_format(data, path.name)]
    if declared.read_path is not None:
        return declared.read_path(path, data)
    return declared.parse(data)


__all__ = [
    "FORMATS",
    "ImportFormatError",
    "ImportTooLarge",
    "ParsedFile",
    "ParsedMessage",
    "ParsedSession",
    "UnzipLimits",
    "detect_format",
    "parse",
    "parse_events",
    "parse_path",
    "preprocess_conversation",
    "supported_formats",
]
