"""Finding transcript files on disk: what the `memoryapp` CLI and `import_sessions` upload.

Standard library only (the client package must not need the server's dependencies)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

SESSION_FOLDER_MARKER = (
    "transcript.jsonl"  # a session folder: transcript.jsonl + events.jsonl + metadata.json
)
SUFFIXES = {".jsonl", ".json", ".ndjson", ".md", ".txt", ".zip"}
# How the server's answer begins for a file in none of the formats it reads (MEM_E102 also
# covers a broken file of a known format, which is a failure, not a file to pass over).
UNKNOWN_FORMAT = "cannot tell the format"
# Files that belong to another file and are read with it, never on their own.
COMPANIONS = (".aider.input.history",)
# Gemini CLI keeps, beside its chats/ folder (~/.gemini/tmp/<project hash>/), a logs.json
# of the prompts alone: the chats hold them with the replies, so it is no transcript.
GEMINI_PROMPT_LOG, GEMINI_CHATS = "logs.json", "chats"


def is_session_folder(path: Path) -> bool:
    return path.is_dir() and (path / SESSION_FOLDER_MARKER).is_file()


def is_gemini_prompt_log(path: Path) -> bool:
    return path.name == GEMINI_PROMPT_LOG and (path.parent / GEMINI_CHATS).is_dir()


def find_transcripts(paths: Iterable[Path]) -> Iterator[Path]:
    """Files and session folders under ``paths``, in a stable order.

    A path named explicitly is always yielded (the importer says if it cannot read it);
    inside folders, only files that look like transcripts are.
    """
    for path in paths:
        path = Path(path)
        if not path.is_dir() or is_session_folder(path):
            yield path
            continue
        for child in sorted(path.rglob("*")):
            if any(part.startswith(".") for part in child.relative_to(path).parts[:-1]):
                continue  # inside hidden folders (.git, .venv, …)
            if is_session_folder(child) or (
                child.is_file()
                and child.suffix.lower() in SUFFIXES
                and not child.name.endswith(COMPANIONS)
                and not is_gemini_prompt_log(child)
                and not is_session_folder(child.parent)
            ):
                yield child


# How far into a transcript its working directory is looked for (it is on the first lines).
CWD_SCAN_LINES = 200


def transcript_cwd(path: Path) -> str | None:
    """The working directory a JSONL transcript was recorded in: the first ``cwd`` of its
    records (Claude Code puts one on each line, Codex in its ``session_meta`` payload), or
    None (another format, an unreadable file)."""
    try:
        with Path(path).open(encoding="utf-8", errors="replace") as lines:
            for _, line in zip(range(CWD_SCAN_LINES), lines, strict=False):
                if '"cwd"' not in line:
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                holders = (record, record.get("payload")) if isinstance(record, dict) else ()
                for holder in holders:
                    if isinstance(holder, dict) and isinstance(holder.get("cwd"), str):
                        return holder["cwd"] or None
    except OSError:
        return None
    return None
