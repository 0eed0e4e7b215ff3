"""Readable text for tool calls and content blocks, shared by the importers.

A tool call's ``content`` is what a person would want to read: the command of a shell
call, the path and the change of an edit, the path and text of a write, and ``key: value``
lines for anything else. Fields of the input that the rendering leaves out (a shell
call's ``workdir`` or ``description``, a read's ``limit``) are returned separately and
end up in ``metadata["input_extra"]``, so nothing the source recorded is lost.
"""

from __future__ import annotations

import json
import posixpath
import shlex
from datetime import datetime
from typing import Any

from transcripts.shell_tools import is_shell_tool

from ._json import json_type, loads_json, tag
from .base import ParsedMessage

# argv prefixes that just wrap a script: ["bash", "-lc", "ls -la"] reads better as "ls -la".
_SHELLS = {"bash", "sh", "zsh", "dash", "fish", "pwsh", "powershell", "powershell.exe", "cmd"}
_SHELL_FLAGS = {"-c", "-lc", "-ic", "-lic", "-command", "/c"}
_PATH_KEYS = ("file_path", "path", "notebook_path", "filename", "file")


def dumps(value: Any) -> str:
    """Compact JSON that keeps non-ASCII text readable."""
    return json.dumps(value, ensure_ascii=False)


def format_command(command: Any) -> str:
    """A command given as a string or an argv list, as one shell line."""
    if isinstance(command, str):
        return command
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        if (
            len(command) == 3
            and posixpath.basename(command[0]).lower() in _SHELLS
            and command[1].lower() in _SHELL_FLAGS
        ):
            return command[2]
        return shlex.join(command)
    return dumps(command)


def _render_fields(fields: dict[str, Any]) -> str:
    lines = []
    for key, value in fields.items():
        if isinstance(value, str):
            lines.append(f"{key}:\n{value}" if "\n" in value else f"{key}: {value}")
        else:
            lines.append(f"{key}: {dumps(value)}")
    return "\n".join(lines)


def _diff_lines(old: str, new: str) -> list[str]:
    lines = [f"-{line}" for line in old.split("\n")] if old else []
    lines += [f"+{line}" for line in new.split("\n")] if new else []
    return lines


def _pop_path(rest: dict[str, Any]) -> str:
    for key in _PATH_KEYS:
        if isinstance(rest.get(key), str):
            return rest.pop(key)
    return ""


def _is_shell(name: str, fields: dict[str, Any]) -> bool:
    return ("command" in fields or "cmd" in fields) and is_shell_tool(name)


def render_tool_input(name: str, value: Any) -> tuple[str, dict[str, Any]]:
    """``(readable text, fields left out of the text)`` for one tool call's input."""
    if value is None:
        return "", {}
    if isinstance(value, str):
        return value, {}
    if not isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, indent=2), {}
    rest = dict(value)
    lowered = name.lower()
    if _is_shell(name, rest):
        command = rest.pop("command") if "command" in rest else rest.pop("cmd")
        return format_command(command), rest
    old_key = "old_string" if "old_string" in rest else "old_str" if "old_str" in rest else ""
    new_key = "new_string" if "new_string" in rest else "new_str" if "new_str" in rest else ""
    if old_key and new_key and isinstance(rest[old_key], str) and isinstance(rest[new_key], str):
        path = _pop_path(rest)
        old, new = rest.pop(old_key), rest.pop(new_key)
        head = f"Edit {path}".rstrip()
        if rest.pop("replace_all", False) is True:
            head += " (all occurrences)"
        return "\n".join([head, *_diff_lines(old, new)]), rest
    if isinstance(rest.get("edits"), list) and any(k in rest for k in _PATH_KEYS):
        path = _pop_path(rest)
        edits = rest.pop("edits")
        lines = [f"Edit {path}"]
        for edit in edits:
            if isinstance(edit, dict):
                old, new = edit.get("old_string", ""), edit.get("new_string", "")
                if isinstance(old, str) and isinstance(new, str):
                    lines.append("@@")
                    lines += _diff_lines(old, new)
                    continue
            lines.append(dumps(edit))
        return "\n".join(lines), rest
    if isinstance(rest.get("new_source"), str) and "notebook_path" in rest:
        path = _pop_path(rest)
        return f"Edit notebook {path}\n{rest.pop('new_source')}", rest
    if ("write" in lowered or "create" in lowered) and isinstance(rest.get("content"), str):
        path = _pop_path(rest)
        if path:
            return f"Write {path}\n{rest.pop('content')}", rest
    if lowered in ("read", "read_file", "view", "view_file") and any(k in rest for k in _PATH_KEYS):
        return f"Read {_pop_path(rest)}", rest
    if lowered == "todowrite" and isinstance(rest.get("todos"), list):
        lines = []
        for todo in rest.pop("todos"):
            if isinstance(todo, dict) and isinstance(todo.get("content"), str):
                status = todo.get("status", "")
                mark = "x" if status == "completed" else "~" if status == "in_progress" else " "
                lines.append(f"[{mark}] {todo['content']}")
            else:
                lines.append(dumps(todo))
        return "\n".join(lines), rest
    return _render_fields(rest), {}


def render_arguments(name: str, arguments: Any) -> tuple[str, dict[str, Any]]:
    """Like ``render_tool_input`` for OpenAI-style ``arguments``: a JSON string, usually.

    Arguments that are not valid JSON are shown as they are: a model can emit broken JSON
    and the call still happened.
    """
    if isinstance(arguments, str):
        stripped = arguments.strip()
        if stripped.startswith(("{", "[")):
            try:
                parsed = loads_json(stripped)
            except Exception:  # broken JSON from the model: keep the raw text
                return arguments, {}
            return render_tool_input(name, parsed)
        return arguments, {}
    return render_tool_input(name, arguments)


def tool_call_message(
    name: str,
    content: str,
    extra: dict[str, Any],
    *,
    call_id: str,
    client_id: str,
    timestamp: datetime | None,
    author: str = "",
    metadata: dict[str, Any] | None = None,
) -> ParsedMessage:
    """The assistant message of one tool call: ``content`` and ``extra`` as a ``render_*``
    function returned them, ``extra`` kept in ``metadata["input_extra"]`` (after the keys of
    ``metadata``)."""
    metadata = dict(metadata or {})
    if extra:
        metadata["input_extra"] = extra
    # ParsedMessage's fields in order: role, content, author, timestamp, tool_name,
    # tool_call_id, client_id, metadata.
    return ParsedMessage(
        "assistant", content, author, timestamp, name, call_id, client_id, metadata
    )


def tool_result_message(
    name: str,
    content: str,
    *,
    call_id: str,
    client_id: str,
    timestamp: datetime | None,
    metadata: dict[str, Any] | None = None,
) -> ParsedMessage:
    """The ``tool`` message of a call's result; the tool is its author."""
    return ParsedMessage("tool", content, name, timestamp, name, call_id, client_id, metadata or {})


def describe_block(block: dict[str, Any]) -> str:
    """A placeholder for a non-text content block, e.g. "[image]"."""
    kind = tag(block)
    if not isinstance(kind, str) or not kind:
        return "[attachment]"
    if kind in ("image", "image_url", "input_image"):
        return "[image]"
    if kind in ("input_audio", "audio"):
        return "[audio]"
    if kind in ("document", "file", "input_file"):
        title = block.get("title") or block.get("filename") or ""
        if not title and isinstance(block.get("file"), dict):
            title = block["file"].get("filename") or ""
        return f"[document: {title}]" if isinstance(title, str) and title else "[document]"
    return f"[{kind}]"


def render_blocks(content: Any) -> str:
    """Text of a string-or-blocks content (Anthropic tool_result content, OpenAI parts).

    Text blocks are joined with newlines; other blocks become placeholders like "[image]";
    a nested ``content`` (tool_result inside tool_result) is rendered recursively.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return dumps(content)
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
            elif isinstance(block.get("refusal"), str):
                parts.append(block["refusal"])
            elif "content" in block and tag(block) not in ("image", "document"):
                parts.append(render_blocks(block["content"]))
            else:
                parts.append(describe_block(block))
        else:
            parts.append(f"[{json_type(block)}]")
    return "\n".join(parts)
