"""The files a memory is about, and the files a session edits: what staleness compares.

A decision or finding names files (in its statement, its fields, the sentences it was read
from); when it names none, the files its session edited before it was said stand in. A
later session that edits one of them (``edited_files``: the Edit, Write, MultiEdit,
apply_patch… tool calls, and aider's SEARCH/REPLACE blocks) may have made it stale
(``memories/enrich/staleness.py``).

Paths are compared by **keys**: the last two parts of a path (``web/views.py``), and for a
bare file name the name itself, so ``/home/sam/repo/web/views.py``, ``./web/views.py`` and
``web/views.py`` are one file, and a memory naming ``views.py`` matches an edit of any
``views.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sessions.enrich.entities.kinds import FILE
from sessions.enrich.entities.messages import extract_from_text

MAX_FILES = 20
MAX_KEY_CHARS = 300
# Tools that change a file (not those that read one).
EDIT_TOOLS = frozenset(
    [
        "edit",
        "write",
        "multiedit",
        "notebookedit",
        "create",
        "str_replace_editor",
        "write_file",
        "edit_file",
        "create_file",
        "apply_patch",
        "str_replace",
        "str_replace_based_edit_tool",
    ]
)
_READ_COMMANDS = frozenset({"view", "read"})
_HEAD = re.compile(r"(?:Edit notebook|Edit|Write|Create)[ \t]+(\S[^\n]*?)[ \t\r]*(?:\n|$)")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (\S[^\n]*?)\s*$", re.M)
_PATCH_MOVE = re.compile(r"^\*\*\* Move to: (\S[^\n]*?)\s*$", re.M)
# aider: the file's path on its own line, a fence, then <<<<<<< SEARCH.
_AIDER_BLOCK = re.compile(r"^([^\n`<>=]{1,300}?)[ \t]*\n```[^\n]*\n<<<<<<< SEARCH", re.M)
_AIDER_APPLIED = re.compile(r"^Applied edit to (\S[^\n]*?)\s*$", re.M)
_PATH_KEYS = ("file_path", "path", "notebook_path", "filename", "file")


def keys(paths: Iterable[str]) -> list[str]:
    """The comparison keys of ``paths`` (see the module's docstring), deduplicated."""
    found: dict[str, None] = {}
    for path in paths:
        parts = [p for p in str(path).strip().strip("`'\"").replace("\\", "/").split("/") if p]
        parts = [p for p in parts if p != "."]
        if not parts:
            continue
        found["/".join(parts[-2:])[:MAX_KEY_CHARS]] = None
        if len(parts) == 1:
            found[parts[0][:MAX_KEY_CHARS]] = None
    return list(found)


def edit_keys(paths: Iterable[str]) -> list[str]:
    """An edited file's keys: its last two parts and its bare name (a memory naming only
    ``views.py`` is about every ``views.py``)."""
    found: dict[str, None] = {}
    for key in keys(paths):
        found[key] = None
        found[key.rsplit("/", 1)[-1]] = None
    return list(found)


def named_files(*texts) -> list[str]:
    """The file paths named in ``texts`` (strings, or the values of dicts and lists)."""
    found: dict[str, None] = {}
    for text in _strings(texts):
        for kind, value, _start, _end in extract_from_text(text):
            if kind == FILE:
                found[value] = None
    return list(found)[:MAX_FILES]


def _strings(values) -> Iterable[str]:
    for value in values:
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            yield from _strings(value.values())
        elif isinstance(value, list | tuple):
            yield from _strings(value)


def edited_files(role: str, content: str, tool_name: str = "", metadata=None) -> list[str]:
    """The files a message edits: a tool call of an editing tool (its path from the
    rendered head, the input's path, or apply_patch's file lines), or aider's
    SEARCH/REPLACE blocks and "Applied edit to" lines."""
    content = content if isinstance(content, str) else ""
    metadata = metadata if isinstance(metadata, dict) else {}
    extra = metadata.get("input_extra")
    extra = extra if isinstance(extra, dict) else {}
    lowered = (tool_name or "").lower()
    if tool_name and role == "assistant":
        if lowered not in EDIT_TOOLS:
            return []
        if str(extra.get("command", "")).lower() in _READ_COMMANDS:
            return []
        if lowered == "apply_patch" or content.startswith("*** Begin Patch"):
            return [*_PATCH_FILE.findall(content), *_PATCH_MOVE.findall(content)]
        head = _HEAD.match(content)
        if head:
            return [re.sub(r"[ \t]*\(all occurrences\)$", "", head.group(1))]
        path = next((extra[k] for k in _PATH_KEYS if isinstance(extra.get(k), str)), "")
        return [path.strip()] if path.strip() else []
    if "<<<<<<< SEARCH" in content or "Applied edit to " in content:
        return [
            *(m.strip() for m in _AIDER_BLOCK.findall(content)),
            *_AIDER_APPLIED.findall(content),
        ]
    if content.startswith("*** Begin Patch"):
        return _PATCH_FILE.findall(content)
    return []


# How many of its session's last edits before it stand in for a memory that names no file.
SESSION_EDITS_LOOKED_AT = 50
TRACKED_TYPES = ("decision", "finding")


def files_of(draft) -> list[str]:
    """The keys of the files a new decision or finding is about: those it names (statement,
    fields, evidence quotes), else those its session edited before it was said."""
    if draft.type not in TRACKED_TYPES:
        return []
    named = named_files(draft.content, draft.details, [e.quote for e in draft.evidence])
    if named or draft.session is None:
        return keys(named)[:MAX_FILES]
    from sessions.models import Message

    before = min((e.message.seq for e in draft.evidence), default=None)
    calls = Message.objects.filter(
        session=draft.session, role="assistant", tool_name__iregex=_EDIT_TOOLS_RE
    )
    if before is not None:
        calls = calls.filter(seq__lt=before)
    edited: dict[str, None] = {}
    for row in calls.order_by("-seq").values("role", "content", "tool_name", "metadata")[
        :SESSION_EDITS_LOOKED_AT
    ]:
        for path in edited_files(**row):
            edited[path] = None
    return keys(edited)[:MAX_FILES]


_EDIT_TOOLS_RE = "^(" + "|".join(sorted(EDIT_TOOLS)) + ")$"
