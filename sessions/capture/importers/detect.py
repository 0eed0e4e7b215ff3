"""Tell which transcript format some bytes are in, from their content first.

The file name only breaks ties (an empty JSON list named ``conversations.json``, a
prefix-less ``.txt``): real files get renamed, content does not lie. Only the start of
the data is examined (the first JSON Lines records, the first lines of text), except
that a document starting with ``[`` or ``{`` is parsed whole, since it is needed anyway.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memoryapp_client.transcript_files import UNKNOWN_FORMAT

from ._json import tag
from ._text import decode_text, split_lines
from .base import ImportFormatError
from .bmad_session import is_bmad_archive
from .cursor import is_cursor_export
from .gemini_cli import is_chat_record, is_checkpoint_entry
from .managed_agent import is_event
from .memoryapp import is_memoryapp_document, is_memoryapp_record
from .opencode import is_opencode_export, is_opencode_message

FORMAT_NAMES = (
    "claude_code",
    "codex",
    "aider",
    "chatgpt",
    "openai_chat",
    "anthropic_session",
    "anthropic_managed_agent",
    "bmad_session",
    "ndjson_events",
    "conversation_md",
    "plain_text",
    "gemini_cli",
    "cursor",
    "opencode",
    "memoryapp",
)
_DESCRIPTIONS = {
    "claude_code": "Claude Code session JSONL",
    "codex": "Codex rollout JSONL",
    "aider": ".aider.chat.history.md",
    "chatgpt": "ChatGPT export conversations.json",
    "openai_chat": "OpenAI chat-completions messages JSON",
    "anthropic_session": "Anthropic session folder (zip or transcript.jsonl)",
    "anthropic_managed_agent": "Claude Managed Agents session event log (JSONL or JSON)",
    "bmad_session": "BMAD session folders, zipped (conversation.md, metadata.yaml, memory files)",
    "ndjson_events": "NDJSON chat events",
    "conversation_md": "conversation.md with '## Turn' headings",
    "plain_text": "plain text 'User: ... / Assistant: ...'",
    "gemini_cli": "Gemini CLI chat recording (chats/session-*.json/.jsonl) or checkpoint",
    "cursor": "Cursor chat exported as Markdown",
    "opencode": "OpenCode session export (opencode export)",
    "memoryapp": "a memoryapp session export (JSON, JSONL or YAML)",
}
_CLAUDE_TYPES = {
    "summary",
    "file-history-snapshot",
    "permission-mode",
    "ai-title",
    "custom-title",
    "last-prompt",
    "queue-operation",
}
_CODEX_TYPES = {"session_meta", "turn_context", "response_item", "event_msg"}
_CODEX_ITEMS = {"function_call", "function_call_output", "reasoning", "custom_tool_call"}
_AIDER = re.compile(r"^# aider chat started at \d{4}-\d\d-\d\d", re.MULTILINE)
_TURN = re.compile(r"^##\s+Turn\s+\d+\b", re.MULTILINE)
_SPEAKER_LINE = re.compile(r"^\*\*Speaker:\*\*", re.MULTILINE)
_PLAIN = re.compile(r"^(user|human|assistant|ai|system|tool)[ \t]*:", re.IGNORECASE | re.MULTILINE)
_MEMORYAPP_YAML = re.compile(r"\Asession:[ \t]*\r?\n[ \t]+id:")
_SNIFF_LINES = 50
_SNIFF_CHARS = 64 * 1024


def supported_formats() -> str:
    """One line per format, for error messages."""
    return "; ".join(f"{name} ({_DESCRIPTIONS[name]})" for name in FORMAT_NAMES)


def _unknown(reason: str) -> ImportFormatError:
    return ImportFormatError(
        f"{UNKNOWN_FORMAT}: {reason}. Supported formats: {supported_formats()}. "
        "Name the format explicitly if it is one of these."
    )


def _record_format(obj: dict[str, Any]) -> str | None:
    """The format a single JSON object (a JSONL record or a lone document) belongs to."""
    kind = tag(obj)
    if is_event(obj) or (
        isinstance(obj.get("data"), list)
        and obj["data"]
        and all(isinstance(e, dict) and is_event(e) for e in obj["data"][:5])
    ):
        return "anthropic_managed_agent"
    if is_chat_record(obj) or is_checkpoint_entry(obj) or (kind == "gemini" and "content" in obj):
        return "gemini_cli"  # before Claude Code, whose records carry a 'sessionId' too
    if is_opencode_export(obj) or is_opencode_message(obj):
        return "opencode"
    if kind in _CODEX_TYPES and isinstance(obj.get("payload"), dict):
        return "codex"
    if "record_type" in obj or ("instructions" in obj and "id" in obj and "timestamp" in obj):
        return "codex"
    if kind in _CODEX_ITEMS and "payload" not in obj:
        return "codex"  # early rollouts wrote bare Responses API items
    if kind == "message" and isinstance(obj.get("content"), list):
        parts = {tag(p) for p in obj["content"] if isinstance(p, dict)}
        if parts & {"input_text", "output_text"}:
            return "codex"
    if "sessionId" in obj or "parentUuid" in obj or kind in _CLAUDE_TYPES:
        return "claude_code"
    if "sender" in obj and "session_id" in obj and "text" in obj:
        return "ndjson_events"
    if "mapping" in obj and ("current_node" in obj or "conversation_id" in obj or "title" in obj):
        return "chatgpt"
    if "traj" in obj or isinstance(obj.get("messages"), list):
        return "openai_chat"
    if "role" in obj and ("content" in obj or "tool_calls" in obj):
        return "anthropic_or_openai"
    return None


def _message_flavour(objs: list[dict[str, Any]]) -> str:
    """Anthropic blocks (tool_use/tool_result) or OpenAI fields (tool_calls/tool_call_id)?"""
    for obj in objs:
        if "tool_calls" in obj or "tool_call_id" in obj or tag(obj, "role") == "function":
            return "openai_chat"
        content = obj.get("content")
        if isinstance(content, list):
            kinds = {tag(b) for b in content if isinstance(b, dict)}
            if kinds & {"tool_use", "tool_result", "thinking"}:
                return "anthropic_session"
            if kinds & {"image_url", "input_audio"}:
                return "openai_chat"
    return ""


def _json_document(document: Any, filename: str) -> str | None:
    if is_memoryapp_document(document) or (
        isinstance(document, dict) and is_memoryapp_record(document)  # JSONL of one line
    ):
        return "memoryapp"
    if isinstance(document, dict):
        found = _record_format(document)
        if found == "anthropic_or_openai":
            return _message_flavour([document]) or "anthropic_session"
        return found
    if not isinstance(document, list):
        return None
    if not document:
        return "chatgpt" if filename.endswith("conversations.json") else None
    first = document[0]
    if isinstance(first, list):
        return "openai_chat"
    if isinstance(first, dict):
        found = _record_format(first)
        if found == "chatgpt":
            return "chatgpt"
        if found in ("openai_chat", "anthropic_or_openai"):
            return "openai_chat"  # a JSON list of messages is the chat-completions shape
        return found
    return None


def _jsonl(text: str) -> str | None:
    objs: list[dict[str, Any]] = []
    for line in split_lines(text[:_SNIFF_CHARS])[:_SNIFF_LINES]:
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a line cut by the sniff limit, or a broken line the parser will name
        if isinstance(obj, dict):
            objs.append(obj)
    if objs and is_memoryapp_record(objs[0]):
        return "memoryapp"
    votes: dict[str, int] = {}
    for obj in objs:
        found = _record_format(obj)
        if found:
            votes[found] = votes.get(found, 0) + 1
    for name in (
        "codex",
        "gemini_cli",
        "claude_code",
        "anthropic_managed_agent",
        "ndjson_events",
        "chatgpt",
        "openai_chat",
    ):
        if votes.get(name):
            return name
    if votes.get("anthropic_or_openai"):
        return _message_flavour(objs) or "anthropic_session"
    return None


def _text(text: str, filename: str) -> str | None:
    head = text[:_SNIFF_CHARS]
    if _MEMORYAPP_YAML.match(head):
        return "memoryapp"
    if is_cursor_export(head):
        return "cursor"
    if _AIDER.search(head) or filename.endswith("chat.history.md"):
        return "aider"
    if (_TURN.search(head) and _SPEAKER_LINE.search(head)) or "\n<!-- memoryapp:session {" in head:
        return "conversation_md"
    if _PLAIN.search(head):
        return "plain_text"
    if filename.endswith((".txt", ".log")):
        return "plain_text"
    return None


def detect_format(data: bytes, filename: str = "") -> str:
    """The format name of ``data`` (see ``FORMAT_NAMES``), or ImportFormatError."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].lower()
    raw = bytes(data) if isinstance(data, bytearray | memoryview) else data
    if isinstance(raw, bytes) and raw.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "bmad_session" if is_bmad_archive(raw) else "anthropic_session"
    text = decode_text(raw)
    if not text.strip():
        raise ImportFormatError("the file is empty: there is nothing to import")
    stripped = text.lstrip()
    found: str | None = None
    if stripped.startswith(("{", "[")):
        try:
            document = json.loads(stripped)
        except json.JSONDecodeError as exc:
            found = _jsonl(stripped) if stripped.startswith("{") else None
            found = found or _by_name(name)
            if found is None:
                # Say where the JSON breaks: that is what the person has to fix.
                line = exc.lineno + text[: len(text) - len(stripped)].count("\n")
                raise ImportFormatError(
                    f"invalid JSON: {exc.msg} (column {exc.colno}); the data starts like JSON "
                    "but is neither a JSON document nor JSON Lines",
                    line=line,
                ) from None
        except RecursionError:
            raise _unknown("the JSON is nested too deeply") from None
        else:
            found = _json_document(document, name)
    else:
        found = _text(text, name)
    if found is None and name:
        found = _by_name(name)
    if found is None:
        raise _unknown("the content matches none of them")
    return found


def _by_name(name: str) -> str | None:
    if name == "conversations.json":
        return "chatgpt"
    if name == "conversation.md":
        return "conversation_md"
    if name == "transcript.jsonl":
        return "anthropic_session"
    if name.endswith(".ndjson"):
        return "ndjson_events"
    if name.startswith("rollout-") and name.endswith(".jsonl"):
        return "codex"
    return None


__all__ = ["FORMAT_NAMES", "detect_format", "supported_formats"]
