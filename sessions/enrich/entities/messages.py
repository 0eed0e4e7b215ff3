"""Entities of one message, aware of how the importers render tool calls
(``transcripts/_render.py``)."""

from __future__ import annotations

import re
from typing import Any

from sessions.enrich.entities.commands import clip_command
from sessions.enrich.entities.kinds import COMMAND, FILE, PACKAGE, URL, Found
from sessions.enrich.entities.packages import package_from_word
from sessions.enrich.entities.regions import scan_region, scan_shell, scan_text
from sessions.enrich.entities.scan import LINES, Scan
from sessions.enrich.entities.urls import scan_urls
from sessions.enrich.text import word_set
from transcripts.shell_tools import is_shell_tool


def extract_from_text(text: str) -> list[Found]:
    """Entities in Markdown-ish prose: ``[(type, value, start, end), ...]`` by position."""
    scan = Scan()
    if text:
        scan_text(scan, text, 0, "prose")
    return scan.result()


_FILE_TOOLS = word_set(
    "edit write read multiedit notebookedit notebookread create str_replace_editor view "
    "view_file read_file write_file edit_file create_file apply_patch str_replace "
    "str_replace_based_edit_tool"
)
_WEB_TOOLS = word_set("webfetch websearch web_search web_fetch fetch browse browser")
_FILE_HEAD = re.compile(r"(?:Edit notebook|Edit|Write|Read|Create|View)[ \t]+(\S[^\n]*?)[ \t\r]*")
_PATH_KEYS = ("file_path", "path", "notebook_path", "filename", "file")
_FIRST_COMMAND_LINE = re.compile(r"^[ \t\r]*([^\s#][^\n]*)", re.M)


def _file_tool(scan: Scan, content: str, lowered: str, extra: dict[str, Any]) -> None:
    if lowered == "apply_patch" or content.startswith("*** Begin Patch"):
        scan_region(scan, content, 0, "code")
        return
    newline = content.find("\n")
    head = content if newline < 0 else content[:newline]
    match = _FILE_HEAD.fullmatch(head)
    path = ""
    if match:
        path = re.sub(r"[ \t]*\(all occurrences\)$", "", match.group(1))
        scan.add(FILE, path, match.start(1), match.start(1) + len(path))
    else:
        path = next((extra[k].strip() for k in _PATH_KEYS if isinstance(extra.get(k), str)), "")
        if path:
            scan.add(FILE, path, -1, -1)
    if newline < 0:
        return
    body, at = content[newline + 1 :], newline + 1
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if re.search(r"requirements[\w.-]*\.txt$", path):
        for line in scan.each(LINES.finditer(body)):
            text = line.group().lstrip("+- ")
            if text and not text.startswith("#"):
                name = package_from_word(text.split()[0], "py")
                if name:
                    name_at = at + line.start() + line.group().find(name)
                    scan.add(PACKAGE, name, name_at, name_at + len(name))
    elif ext in ("md", "mdx", "txt", "rst", "markdown"):
        scan_text(scan, body, at, "prose")
    else:
        scan_region(scan, body, at, "code")


def _tool_call(scan: Scan, content: str, tool_name: str, metadata: dict[str, Any]) -> None:
    lowered = tool_name.lower()
    extra = metadata.get("input_extra")
    extra = extra if isinstance(extra, dict) else {}
    if is_shell_tool(tool_name):
        first = _FIRST_COMMAND_LINE.search(content)
        if first:
            command = clip_command(first.group(1))
            scan.add(COMMAND, command, first.start(1), first.start(1) + len(command))
        scan_shell(scan, content, 0, console=False, commands=False)
    elif lowered in _FILE_TOOLS:
        _file_tool(scan, content, lowered, extra)
    elif lowered in _WEB_TOOLS or "fetch" in lowered:
        scan_urls(scan, content, 0)
        if not any(f[0] == URL for f in scan.found) and isinstance(extra.get("url"), str):
            scan.add(URL, extra["url"], -1, -1)
    else:
        scan_text(scan, content, 0, "prose")


def extract_from_message(
    role: str, content: str, tool_name: str = "", metadata: dict[str, Any] | None = None
) -> list[Found]:
    """Entities of one message, as ``[(type, value, start, end), ...]`` by position.

    An assistant message with a ``tool_name`` is a tool call (its content rendered by the
    importers); a ``tool`` message is tool output; anything else is prose. Offsets index
    ``content``; an entity taken from ``metadata`` has ``start = end = -1``.
    """
    content = content if isinstance(content, str) else ""
    metadata = metadata if isinstance(metadata, dict) else {}
    scan = Scan()
    if tool_name and role == "assistant":
        _tool_call(scan, content, tool_name, metadata)
    elif content:
        scan_text(scan, content, 0, "output" if role == "tool" else "prose")
    return scan.result()
