"""Anthropic-format session folders (the Amplifier layout; docs/api.md).

A session is a folder ``<session-id>/`` holding ``transcript.jsonl`` (one Anthropic
Messages API message per line: ``{role, content, timestamp?}`` with ``content`` a string
or a list of blocks), ``metadata.json`` (an object describing the session) and
``events.jsonl`` (the session's log events). It arrives as a zip archive (several session
folders in one archive give several sessions), as a mapping ``{filename: bytes}`` (paths
allowed: files are grouped by folder), or as the bytes of a lone ``transcript.jsonl``.

Choices:

* **Blocks.** ``text`` blocks of one line make one message of the line's role;
  ``thinking`` goes to ``metadata["thinking"]``; ``redacted_thinking`` is dropped; each
  ``tool_use`` (and Amplifier's ``tool_call`` block or ``tool_calls`` list) is its own
  assistant message (``tool_name``, ``tool_call_id``, readable input, other input fields
  in ``metadata["input_extra"]``); each ``tool_result`` is a ``tool`` message with the
  same ``tool_call_id``, the tool name from the call and ``metadata["is_error"]``;
  a ``{"role": "tool", "tool_call_id": ...}`` line is a tool message too. Images and
  documents become "[image]" / "[document]". ``developer`` lines become ``system``; a line
  of any other role is skipped and counted (format drift, see ``_drift``).
* **metadata.json** fills ``external_id`` (``session_id``/``id``, else the folder name),
  ``title`` (``title``/``name``), ``started_at``/``ended_at`` (``created``/``created_at``/
  ``started_at``, ``ended_at``/``updated``/``updated_at``), ``agent_name`` (``agent_name``/
  ``agent``, else "amplifier", whose layout this is), ``agent_persona``, ``workflow``,
  ``user_name``, ``status``, ``topics``/``tags``, ``artifacts``; every other key goes to
  session metadata as is (``model``, ``bundle``, ``turn_count``, ...).
* **Times.** A line's own ``timestamp`` wins. Otherwise ``events.jsonl`` helps: events
  naming a tool call id (``tool_call_id``/``tool_use_id``/``call_id``/``id`` in the
  event or its ``data``) time that call and its result, ``prompt:submit``-like events
  time the user messages in order, and the first/last event time the session when
  metadata does not.
* **Ids.** Client id = ``L<line>`` of transcript.jsonl (``L<line>#<n>`` when a line gives
  several messages), the block id for tool calls, ``<tool id>:result`` for results.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .._common import ensure_unique_client_ids, parse_timestamp, time_bounds
from .._drift import skip
from .._flavour import is_chat_message, message_flavour
from .._json import expect, get_str, iter_json_lines, json_type, loads_json, tag
from .._render import (
    describe_block,
    render_arguments,
    render_blocks,
    render_tool_input,
    tool_call_message,
    tool_result_message,
)
from .._text import decode_text, require_text
from ..base import (
    STATUSES,
    ImportFormatError,
    ImportTooLarge,
    ParsedMessage,
    ParsedSession,
    UnzipLimits,
)
from ..format import Format, Recognition
from ..sample import Sample
from .memoryapp import message_from_record, session_from_record

NAME = "anthropic_session"
DEFAULT_AGENT = "amplifier"
TRANSCRIPT, METADATA, EVENTS = "transcript.jsonl", "metadata.json", "events.jsonl"

_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
_TOOL_USE = {"tool_use", "tool_call", "server_tool_use", "mcp_tool_use"}
_ID_KEYS = ("tool_call_id", "tool_use_id", "call_id")
_PROMPT_EVENTS = ("prompt:submit", "user_prompt", "userpromptsubmit", "prompt_submit")
_META_MAP = {
    "title": ("title", "name"),
    "started_at": ("created", "created_at", "started_at", "start_time"),
    "ended_at": ("ended_at", "updated", "updated_at", "last_updated", "end_time"),
    "agent_name": ("agent_name", "agent"),
    "agent_persona": ("agent_persona", "persona"),
    "workflow": ("workflow",),
    "user_name": ("user_name", "user"),
}


@dataclass
class _Events:
    first: datetime | None = None
    last: datetime | None = None
    tool_times: dict[str, list[datetime]] = field(default_factory=dict)
    prompt_times: list[datetime] = field(default_factory=list)
    session_id: str = ""


def _read_events(data: bytes | None) -> _Events:
    events = _Events()
    if data is None:
        return events
    text = decode_text(data, what=EVENTS)
    try:
        for line, obj in iter_json_lines(text):
            when = None
            for key in ("ts", "timestamp", "time"):
                if obj.get(key) not in (None, ""):
                    when = parse_timestamp(obj[key], line=line, field=key)
                    break
            if isinstance(obj.get("session_id"), str) and not events.session_id:
                events.session_id = obj["session_id"]
            if when is None:
                continue
            events.first = min(filter(None, [events.first, when]))
            events.last = max(filter(None, [events.last, when]))
            name = str(obj.get("event") or tag(obj) or obj.get("name") or "").lower()
            data_part = obj.get("data") if isinstance(obj.get("data"), dict) else {}
            for source in (obj, data_part):
                ids = [source[k] for k in (*_ID_KEYS, "id") if isinstance(source.get(k), str)]
                if ids and (source is data_part or "tool" in name):
                    events.tool_times.setdefault(ids[0], []).append(when)
                    break
            if any(marker in name for marker in _PROMPT_EVENTS):
                events.prompt_times.append(when)
    except ImportFormatError as exc:
        raise ImportFormatError(
            f"{EVENTS}: {exc.message}", line=exc.line, field=exc.field
        ) from None
    return events


def _read_metadata(data: bytes | None) -> dict[str, Any]:
    if data is None:
        return {}
    text = decode_text(data, what=METADATA)
    if not text.strip():
        return {}
    value = loads_json(text, what=f"JSON in {METADATA}")
    if not isinstance(value, dict):
        raise ImportFormatError(f"{METADATA} must hold a JSON object, got {json_type(value)}")
    return value


class _Transcript:
    """Builds messages from transcript lines."""

    def __init__(self, events: _Events):
        self.events = events
        self.messages: list[ParsedMessage] = []
        self.tool_names: dict[str, str] = {}
        self.prompt_index = 0

    def _tool_time(self, tool_id: str, result: bool) -> datetime | None:
        times = self.events.tool_times.get(tool_id)
        if not times:
            return None
        return times[-1] if result else times[0]

    def add_line(self, line: int, obj: dict[str, Any]) -> None:
        if isinstance(obj.get("memoryapp"), dict):
            self.messages.append(_exported_message(line, obj))
            return
        source_role = get_str(obj, "role", line=line)
        when = parse_timestamp(obj.get("timestamp"), line=line)
        content = obj.get("content")
        expect(
            content,
            str | list | None,
            "'content' must be a string or a list of blocks",
            line=line,
            field="content",
        )
        produced: list[ParsedMessage] = []
        if source_role == "tool" or source_role == "function":
            call_id = get_str(obj, "tool_call_id", line=line) or get_str(obj, "tool_use_id")
            name = get_str(obj, "name", line=line) or self.tool_names.get(call_id, "")
            produced.append(self._result(call_id, name, render_blocks(content), when, {}))
        else:
            role = _ROLES.get(source_role)
            if role is None:
                skip("role", source_role or "(none)")
                return
            produced = self._blocks(line, role, content, when)
            calls = obj.get("tool_calls")
            expect(calls, list | None, "'tool_calls' must be a list", line=line, field="tool_calls")
            for k, call in enumerate(calls or []):
                produced.append(self._openai_call(line, k, call, when))
        user_messages = [m for m in produced if m.role == "user"]
        if user_messages:
            # Each prompt the person typed has one prompt event, in order, dated or not.
            if when is None and self.prompt_index < len(self.events.prompt_times):
                for message in user_messages:
                    message.timestamp = self.events.prompt_times[self.prompt_index]
            self.prompt_index += 1
        for n, message in enumerate(produced):
            if not message.client_id:
                message.client_id = f"L{line}" if n == 0 else f"L{line}#{n}"
        self.messages += produced

    def _blocks(
        self, line: int, role: str, content: Any, when: datetime | None
    ) -> list[ParsedMessage]:
        out: list[ParsedMessage] = []
        texts: list[str] = []
        thinking: list[str] = []
        text_message = ParsedMessage(role=role, content="", timestamp=when)
        out.append(text_message)
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for index, block in enumerate(blocks):
            expect(
                block,
                dict,
                "each content block must be an object",
                line=line,
                field=f"content[{index}]",
            )
            kind = tag(block)
            if kind == "text":
                if isinstance(block.get("text"), str) and block["text"]:
                    texts.append(block["text"])
            elif kind == "thinking":
                if isinstance(block.get("thinking"), str) and block["thinking"]:
                    thinking.append(block["thinking"])
            elif kind in _TOOL_USE:
                tool_id = get_str(block, "id", line=line, field=f"content[{index}].id")
                name = get_str(block, "name", line=line, field=f"content[{index}].name")
                raw = block.get("input", block.get("arguments"))
                text, extra = render_tool_input(name, raw)
                out.append(self._call(tool_id, name, text, extra, when))
            elif kind == "tool_result":
                tool_id = get_str(block, "tool_use_id", line=line, field=f"content[{index}]")
                name = self.tool_names.get(tool_id, "")
                meta = (
                    {"is_error": block["is_error"]}
                    if isinstance(block.get("is_error"), bool)
                    else {}
                )
                out.append(
                    self._result(tool_id, name, render_blocks(block.get("content")), when, meta)
                )
            elif kind != "redacted_thinking":
                texts.append(describe_block(block))
        text_message.content = "\n".join(texts)
        if thinking:
            text_message.metadata["thinking"] = "\n\n".join(thinking)
        if not texts and (len(out) > 1 or not thinking):
            calls = [m for m in out[1:] if m.role == "assistant"]
            if thinking and calls:
                calls[0].metadata["thinking"] = text_message.metadata["thinking"]
            out.remove(text_message)
        return out

    def _call(
        self, tool_id: str, name: str, text: str, extra: dict[str, Any], when: datetime | None
    ) -> ParsedMessage:
        self.tool_names[tool_id] = name
        when = when or self._tool_time(tool_id, result=False)
        return tool_call_message(
            name, text, extra, call_id=tool_id, client_id=tool_id, timestamp=when
        )

    def _result(
        self, tool_id: str, name: str, text: str, when: datetime | None, meta: dict[str, Any]
    ) -> ParsedMessage:
        return tool_result_message(
            name,
            text,
            call_id=tool_id,
            client_id=f"{tool_id}:result" if tool_id else "",
            timestamp=when or self._tool_time(tool_id, result=True),
            metadata=meta,
        )

    def _openai_call(self, line: int, k: int, call: Any, when: datetime | None) -> ParsedMessage:
        expect(call, dict, "each tool call must be an object", line=line, field=f"tool_calls[{k}]")
        function = call.get("function") if isinstance(call.get("function"), dict) else call
        name = get_str(function, "name", line=line) or get_str(call, "tool", line=line)
        tool_id = get_str(call, "id", line=line, field=f"tool_calls[{k}].id")
        text, extra = render_arguments(name, function.get("arguments", call.get("input")))
        return self._call(tool_id, name, text, extra, when)


def _exported_message(line: int, obj: dict[str, Any]) -> ParsedMessage:
    """A line our export wrote (``sessions/portable/session_folder.py``): its exact fields,
    and its content from its one block where they leave it out."""
    record = expect(
        obj.get("memoryapp"),
        dict,
        "every line of an exported session folder has 'memoryapp'",
        line=line,
        field="memoryapp",
    )
    if "content" not in record:
        content = obj.get("content")
        block = content[0] if isinstance(content, list) and content else {}
        block = block if isinstance(block, dict) else {}
        content = content if isinstance(content, str) else block.get("text", block.get("content"))
        record = {**record, "content": content if isinstance(content, str) else ""}
    return message_from_record(record, line=line, where="memoryapp.")


def _session_from_files(
    folder: str, transcript: bytes, metadata: bytes | None, events: bytes | None
) -> ParsedSession:
    text = decode_text(transcript, what=TRANSCRIPT)
    meta = _read_metadata(metadata)
    ours = meta.get("memoryapp")
    if isinstance(ours, dict):
        return _exported_session(text, ours)  # a session without messages is one too
    require_text(text, what=TRANSCRIPT)
    log = _read_events(events)
    builder = _Transcript(log)
    try:
        for line, obj in iter_json_lines(text):
            builder.add_line(line, obj)
    except ImportFormatError as exc:
        raise ImportFormatError(
            f"{TRANSCRIPT}: {exc.message}", line=exc.line, field=exc.field
        ) from None
    messages = builder.messages
    ensure_unique_client_ids(messages)
    session = ParsedSession(source_format=NAME, messages=messages)
    used: set[str] = set()
    for attribute, keys in _META_MAP.items():
        key = next((k for k in keys if meta.get(k) not in (None, "")), None)
        if key is None:
            continue
        used.add(key)
        if attribute in ("started_at", "ended_at"):
            setattr(session, attribute, parse_timestamp(meta[key], field=f"{METADATA}.{key}"))
        elif isinstance(meta[key], str):
            setattr(session, attribute, meta[key])
        else:
            used.discard(key)
    session_key = next((k for k in ("session_id", "id") if isinstance(meta.get(k), str)), None)
    if session_key:
        used.add(session_key)
    session.external_id = (
        meta[session_key] if session_key else log.session_id or posixpath.basename(folder)
    )
    if isinstance(meta.get("status"), str) and meta["status"] in STATUSES:
        session.status = meta["status"]
        used.add("status")
    for attribute, keys in (("topics", ("topics", "tags")), ("artifacts", ("artifacts",))):
        for key in keys:
            values = meta.get(key)
            if isinstance(values, list) and all(isinstance(v, str) for v in values):
                getattr(session, attribute).extend(values)
                used.add(key)
    session.agent_name = session.agent_name or DEFAULT_AGENT
    first, last = time_bounds(messages)
    session.started_at = session.started_at or first or log.first
    session.ended_at = session.ended_at or last or log.last
    session.metadata = {k: v for k, v in meta.items() if k not in used}
    return session


def _exported_session(text: str, ours: dict[str, Any]) -> ParsedSession:
    """A folder our export wrote: the session's exact fields from ``metadata.json``."""
    try:
        session = session_from_record(ours.get("session"))
        session.messages = [_exported_message(line, obj) for line, obj in iter_json_lines(text)]
    except ImportFormatError as exc:
        raise ImportFormatError(
            f"{TRANSCRIPT}: {exc.message}", line=exc.line, field=exc.field
        ) from None
    attachments = ours.get("attachments") or {}
    expect(attachments, dict, "'memoryapp.attachments' must be an object", field="attachments")
    session.attachments = attachments
    return session


def _group(files: Mapping[str, bytes]) -> list[ParsedSession]:
    folders: dict[str, dict[str, bytes]] = {}
    for name, content in files.items():
        path = name.replace("\\", "/")
        if path.endswith("/") or "__MACOSX" in path:
            continue
        folder, base = posixpath.split(path)
        if base in (TRANSCRIPT, METADATA, EVENTS):
            folders.setdefault(folder, {})[base] = content
    sessions = []
    for folder in sorted(folders):
        parts = folders[folder]
        if TRANSCRIPT not in parts:
            raise ImportFormatError(
                f"session folder '{folder or '.'}' has no {TRANSCRIPT}", field=folder or None
            )
        sessions.append(
            _session_from_files(folder, parts[TRANSCRIPT], parts.get(METADATA), parts.get(EVENTS))
        )
    if not sessions:
        raise ImportFormatError(
            f"no {TRANSCRIPT} found: an Anthropic session folder holds {TRANSCRIPT}, "
            f"{METADATA} and {EVENTS}"
        )
    return sessions


_CHUNK = 1024 * 1024  # decompressed bytes read at a time


def _session_file(name: str) -> bool:
    return posixpath.basename(name) in (TRANSCRIPT, METADATA, EVENTS)


def unzip(
    data: bytes, limits: UnzipLimits, wanted: Callable[[str], bool] = _session_file
) -> dict[str, bytes]:
    """The ``wanted`` files of a zip archive (by path), read within ``limits`` (zip bombs: a
    2 MB archive of zeros can expand to gigabytes)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [
                info for info in archive.infolist() if not info.is_dir() and wanted(info.filename)
            ]
            # What the archive declares, first: a bomb is refused before any inflating.
            total = 0
            for info in members:
                total += info.file_size
                _check_expansion(info, info.file_size, total, limits)
            files, total = {}, 0
            for info in members:
                files[info.filename] = _read_member(archive, info, total, limits)
                total += len(files[info.filename])
            return files
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
        raise ImportFormatError(f"not a readable zip archive: {exc}") from None
    except NotImplementedError as exc:  # unsupported compression method
        raise ImportFormatError(f"cannot read the zip archive: {exc}") from None


def _read_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, total_before: int, limits: UnzipLimits
) -> bytes:
    """One member, chunk by chunk, checked after each chunk (declared sizes can lie)."""
    chunks, size = [], 0
    with archive.open(info) as member:
        while chunk := member.read(_CHUNK):
            chunks.append(chunk)
            size += len(chunk)
            _check_expansion(info, size, total_before + size, limits)
    return b"".join(chunks)


def _check_expansion(info: zipfile.ZipInfo, size: int, total: int, limits: UnzipLimits) -> None:
    """Raise ``ImportTooLarge`` when ``info`` expanding to ``size`` bytes (``total`` with the
    members before it) passes a limit."""
    compressed = max(info.compress_size, 1)
    numbers = {
        "member": info.filename,
        "member_bytes": size,
        "member_limit_bytes": limits.member_bytes,
        "total_bytes": total,
        "total_limit_bytes": limits.total_bytes,
        "compressed_bytes": info.compress_size,
        "ratio": round(size / compressed, 1),
        "ratio_limit": limits.ratio,
    }
    if size > limits.member_bytes:
        problem = f"{info.filename} expands to {size:,} bytes, over the {limits.member_bytes:,}"
        problem += "-byte limit for one file"
    elif total > limits.total_bytes:
        problem = f"the archive's session files expand to {total:,} bytes (at least), over "
        problem += f"the {limits.total_bytes:,}-byte limit"
    elif size > limits.ratio_grace_bytes and size > limits.ratio * compressed:
        problem = f"{info.filename} expands {size / compressed:,.0f} times ({compressed:,} "
        problem += f"bytes to {size:,}), over the limit of {limits.ratio}:1"
    else:
        return
    raise ImportTooLarge(
        f"zip archive refused: {problem}. Split it, or import the session folders one by one.",
        numbers=numbers,
        field="file",
    )


def parse_anthropic_session(
    data: bytes | Mapping[str, bytes], *, unzip_limits: UnzipLimits | None = None
) -> list[ParsedSession]:
    """Parse session folder(s) from a zip archive (read within ``unzip_limits``), a
    ``{filename: bytes}`` mapping, or a lone ``transcript.jsonl``."""
    if isinstance(data, Mapping):
        return _group(data)
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ImportFormatError(f"expected bytes or a mapping of files, got {type(data).__name__}")
    raw = bytes(data)
    if raw.startswith(b"PK\x03\x04") or raw.startswith(b"PK\x05\x06"):
        return _group(unzip(raw, unzip_limits or UnzipLimits()))
    return [_session_from_files("", raw, None, None)]


def _claims_record(obj: dict[str, Any]) -> int:
    # A bare chat message: the lowest claim, and OpenAI's instead when its fields show it
    # (openai_chat's document and lines scores).
    return 10 if is_chat_message(obj) else 0


def _claims_lines(sample: Sample) -> int:
    if NAME in sample.owners and message_flavour(sample.records) != "openai_chat":
        return 5
    return 0


def _claims_archive(data: bytes) -> int:
    return 1  # any zip: below BMAD's, whose archives hold a conversation.md


def _named_like(name: str) -> bool:
    return name == TRANSCRIPT


def folder_files(folder: Path) -> dict[str, bytes]:
    """A session folder's files as ``parse_anthropic_session`` takes them."""
    return {
        f"{folder.name}/{name}": (folder / name).read_bytes()
        for name in (TRANSCRIPT, METADATA, EVENTS)
        if (folder / name).is_file()
    }


def _read_path(path: Path, data: bytes) -> list[ParsedSession]:
    if path.name == TRANSCRIPT:
        # A transcript.jsonl read on its own still has its folder's other files beside it.
        return parse_anthropic_session(folder_files(path.parent))
    return parse_anthropic_session(data)


FORMAT = Format(
    name=NAME,
    position=6,
    description="Anthropic session folder (zip or transcript.jsonl)",
    documentation=(
        "a zip of session folders, each with `transcript.jsonl` (Anthropic Messages API "
        "messages), `metadata.json` and `events.jsonl`"
    ),
    parse=parse_anthropic_session,
    recognition=Recognition(
        record=_claims_record, lines=_claims_lines, archive=_claims_archive, filename=_named_like
    ),
    label="Anthropic session folder",
    read_path=_read_path,
)


__all__ = ["parse_anthropic_session"]
