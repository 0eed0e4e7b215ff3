"""Claude Code session JSONL (``~/.claude/projects/<slug>/<session-uuid>.jsonl``).

One JSON object per line. Conversation records (``type`` user / assistant) carry ``uuid``,
``parentUuid``, ``isSidechain``, ``sessionId``, ``timestamp``, ``cwd``, ``gitBranch`` and
``version`` around an Anthropic Messages ``message``. Everything else (progress,
file-history-snapshot, attachment, system, permission-mode, mode, last-prompt, queue
operations and any type this module does not know) is bookkeeping and skipped.

Choices:

* **Thread.** Records form a tree through ``parentUuid`` (edits and rewinds make
  branches). The main thread is the path from the last non-sidechain conversation record
  up to the root; a ``compact_boundary`` record has no parent but a ``logicalParentUuid``,
  which is followed so a compacted session keeps its history. Records of the same API
  message and results of the thread's tool calls that sit on a sibling branch (Claude Code
  chains parallel tool calls that way) are kept too. ``isSidechain`` records (subagent
  transcripts) are all kept, in file order, with ``metadata["sidechain"] = True``.
* **Merging.** Assistant lines sharing ``message.id`` are one API message: their ``text``
  blocks become one assistant message (client id = ``message.id``), their ``thinking``
  text goes to ``metadata["thinking"]`` (of the text message, else of the first tool
  call; an API message with only thinking stays as an assistant message with empty
  content), ``redacted_thinking`` is dropped. Repeated blocks (same text, same tool id)
  are written once.
* **Tools.** Each ``tool_use`` block is its own assistant message: ``tool_name``,
  ``tool_call_id`` = the block id, client id = ``<message.id>#<tool id>``, content = a
  readable rendering of the input (``_render``), input fields not shown in
  ``metadata["input_extra"]``. Each ``tool_result`` block is a ``tool`` message with the
  same ``tool_call_id``, the tool name looked up from the call, ``metadata["is_error"]``.
* **Injected user records.** ``isMeta`` records (skill text, caveats the harness adds)
  and ``isCompactSummary`` records are not what the person typed: role ``system``,
  ``metadata["injected"] = True``.
* **Ids.** A user record's messages get the record ``uuid`` (then ``uuid#1``, ``uuid#2``
  when one record holds several blocks). Session ``external_id`` = ``sessionId``.
* **Title.** ``custom-title`` (a /rename) wins over the last ``ai-title``, which wins over
  a ``summary`` record (the one whose ``leafUuid`` is on the thread, else the last).
* **Metadata.** Session: ``cwd``, ``git_branch``, ``version`` (the latest), ``versions``,
  ``models``, ``entrypoint``, ``session_ids`` when the file mixes several. Assistant
  messages: ``model``, ``message_id``, ``request_id``, ``stop_reason``, ``usage``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._common import distinct, ensure_unique_client_ids, parse_timestamp, time_bounds
from .._drift import skip
from .._json import expect, get_str, iter_json_lines, tag
from .._render import (
    describe_block,
    render_blocks,
    render_tool_input,
    tool_call_message,
    tool_result_message,
)
from .._text import decode_text, require_text
from ..base import ImportFormatError, ParsedMessage, ParsedSession
from ..format import Format, Recognition
from ..sample import Sample

NAME = "claude_code"
AGENT_NAME = "claude-code"

# Types seen in real files: they tell "a Claude Code file with nothing to import" from "not
# a Claude Code file at all", and any other type is counted as skipped (format drift).
_KNOWN_TYPES = {
    "user",
    "assistant",
    "system",
    "summary",
    "progress",
    "attachment",
    "file-history-snapshot",
    "permission-mode",
    "mode",
    "ai-title",
    "custom-title",
    "last-prompt",
    "queue-operation",
}
_TOOL_USE_TYPES = {"tool_use", "server_tool_use", "mcp_tool_use"}


@dataclass
class _Record:
    line: int
    kind: str  # "user" or "assistant"
    obj: dict[str, Any]
    message: dict[str, Any]
    content: list[dict[str, Any]] | str
    uuid: str
    sidechain: bool


@dataclass
class _Group:
    """The lines of one assistant API message (same ``message.id``)."""

    text_message: ParsedMessage
    texts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    tool_messages: list[ParsedMessage] = field(default_factory=list)
    tool_ids: set[str] = field(default_factory=set)


def _read_record(line: int, obj: dict[str, Any], kind: str) -> _Record:
    message = obj.get("message")
    expect(message, dict, f"a {kind} record needs a 'message' object", line=line, field="message")
    content = message.get("content")
    if content is None:
        content = []
    expect(
        content,
        str | list,
        "'content' must be a string or a list of blocks",
        line=line,
        field="message.content",
    )
    if isinstance(content, list):
        for index, block in enumerate(content):
            expect(
                block,
                dict,
                "each content block must be an object",
                line=line,
                field=f"message.content[{index}]",
            )
    sidechain = obj.get("isSidechain") is True
    get_str(message, "id", line=line, field="message.id")  # checked here, where the line is known
    return _Record(line, kind, obj, message, content, get_str(obj, "uuid", line=line), sidechain)


def _thread_uuids(records: list[_Record], parents: dict[str, tuple[str, str]]) -> set[str]:
    """Uuids on the path from the last main-thread conversation record to the root."""
    leaf = next((r for r in reversed(records) if not r.sidechain and r.uuid), None)
    path: set[str] = set()
    current = leaf.uuid if leaf else ""
    while current and current not in path:
        path.add(current)
        parent, logical = parents.get(current, ("", ""))
        current = parent or logical
    return path


def _select(records: list[_Record], path: set[str]) -> list[_Record]:
    """The records to import: the thread, its split pieces, its tool results, sidechains."""
    on_thread = [r for r in records if r.sidechain or not r.uuid or r.uuid in path]
    message_ids = {get_str(r.message, "id") for r in on_thread if r.kind == "assistant"} - {""}
    tool_ids: set[str] = set()
    answered: set[str] = set()
    chosen = {id(r) for r in on_thread}
    for record in records:
        if record.kind == "assistant" and get_str(record.message, "id") in message_ids:
            chosen.add(id(record))
    for record in records:
        if id(record) not in chosen or isinstance(record.content, str):
            continue
        for block in record.content:
            if tag(block) in _TOOL_USE_TYPES and isinstance(block.get("id"), str):
                tool_ids.add(block["id"])
            elif tag(block) == "tool_result":
                answered.add(str(block.get("tool_use_id", "")))
    for record in records:
        if id(record) in chosen or record.kind != "user" or isinstance(record.content, str):
            continue
        results = [str(b.get("tool_use_id", "")) for b in record.content if tag(b) == "tool_result"]
        if results and all(r in tool_ids and r not in answered for r in results):
            chosen.add(id(record))
            answered.update(results)
    return [r for r in records if id(r) in chosen]


class _Builder:
    """Turns the selected records into messages, in file order."""

    def __init__(self, tool_names: dict[str, str]):
        self.tool_names = tool_names
        self.messages: list[ParsedMessage] = []
        self.groups: dict[str, _Group] = {}

    def _base_metadata(self, record: _Record) -> dict[str, Any]:
        meta: dict[str, Any] = {}
        if record.sidechain:
            meta["sidechain"] = True
            agent_id = record.obj.get("agentId")
            if isinstance(agent_id, str) and agent_id:
                meta["agent_id"] = agent_id
        return meta

    def add_assistant(self, record: _Record) -> None:
        message = record.message
        message_id = get_str(message, "id", line=record.line, field="message.id") or record.uuid
        model = tag(message, "model")
        timestamp = parse_timestamp(record.obj.get("timestamp"), line=record.line)
        group = self.groups.get(message_id)
        if group is None:
            meta = self._base_metadata(record)
            meta["message_id"] = message_id
            if model:
                meta["model"] = model
            placeholder = ParsedMessage(
                role="assistant",
                content="",
                author=model,
                timestamp=timestamp,
                client_id=message_id,
                metadata=meta,
            )
            group = self.groups[message_id] = _Group(placeholder)
            self.messages.append(placeholder)
        meta = group.text_message.metadata
        request_id = record.obj.get("requestId")
        if isinstance(request_id, str) and request_id:
            meta["request_id"] = request_id
        # Every line repeats stop_reason/usage; the last line holds the final values.
        if message.get("stop_reason"):
            meta["stop_reason"] = message["stop_reason"]
        if isinstance(message.get("usage"), dict):
            meta["usage"] = message["usage"]
        if record.obj.get("isApiErrorMessage") is True:
            meta["api_error"] = True
        blocks = record.content
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        for block in blocks:
            kind = tag(block)
            if kind == "text":
                text = block.get("text")
                if isinstance(text, str) and text and text not in group.texts:
                    if not group.texts and timestamp is not None:
                        # The reply was said when its text arrived, not when thinking began.
                        group.text_message.timestamp = timestamp
                    group.texts.append(text)
            elif kind == "thinking":
                thinking = block.get("thinking")
                if isinstance(thinking, str) and thinking and thinking not in group.thinking:
                    group.thinking.append(thinking)
            elif kind in _TOOL_USE_TYPES:
                self._add_tool_call(record, group, block, message_id, model, timestamp)
            elif kind.endswith("_tool_result"):
                # Server-side tools (web search) answer inside the assistant message.
                self._add_tool_result(record, block, timestamp, f"{message_id}#{kind}")
            # redacted_thinking and unknown blocks carry nothing readable: dropped.

    def _add_tool_call(
        self,
        record: _Record,
        group: _Group,
        block: dict[str, Any],
        message_id: str,
        model: str,
        timestamp: Any,
    ) -> None:
        tool_id = get_str(block, "id", line=record.line, field="message.content.id")
        if tool_id and tool_id in group.tool_ids:
            return
        group.tool_ids.add(tool_id)
        name = get_str(block, "name", line=record.line, field="message.content.name")
        content, extra = render_tool_input(name, block.get("input"))
        meta = self._base_metadata(record)
        meta["message_id"] = message_id
        if model:
            meta["model"] = model
        suffix = tool_id or str(len(group.tool_messages))
        tool_message = tool_call_message(
            name,
            content,
            extra,
            call_id=tool_id,
            client_id=f"{message_id}#{suffix}",
            timestamp=timestamp,
            author=model,
            metadata=meta,
        )
        group.tool_messages.append(tool_message)
        self.messages.append(tool_message)

    def _add_tool_result(
        self, record: _Record, block: dict[str, Any], timestamp: Any, client_id: str
    ) -> None:
        call_id = get_str(block, "tool_use_id", line=record.line, field="tool_use_id")
        name = self.tool_names.get(call_id, "")
        meta = self._base_metadata(record)
        if isinstance(block.get("is_error"), bool):
            meta["is_error"] = block["is_error"]
        content = render_blocks(block.get("content"))
        self.messages.append(
            tool_result_message(
                name,
                content,
                call_id=call_id,
                client_id=client_id,
                timestamp=timestamp,
                metadata=meta,
            )
        )

    def add_user(self, record: _Record) -> None:
        timestamp = parse_timestamp(record.obj.get("timestamp"), line=record.line)
        injected = record.obj.get("isMeta") is True or record.obj.get("isCompactSummary") is True
        produced = 0

        def next_id() -> str:
            nonlocal produced
            produced += 1
            return record.uuid if produced == 1 else f"{record.uuid}#{produced - 1}"

        pending: list[str] = []

        def flush() -> None:
            if not any(pending):
                pending.clear()
                return
            meta = self._base_metadata(record)
            if injected:
                meta["injected"] = True
                if record.obj.get("isCompactSummary") is True:
                    meta["compact_summary"] = True
            self.messages.append(
                ParsedMessage(
                    role="system" if injected else "user",
                    content="\n".join(pending),
                    timestamp=timestamp,
                    client_id=next_id(),
                    metadata=meta,
                )
            )
            pending.clear()

        if isinstance(record.content, str):
            pending.append(record.content)
        else:
            for block in record.content:
                kind = tag(block)
                if kind == "tool_result":
                    flush()
                    self._add_tool_result(record, block, timestamp, next_id())
                elif kind == "text":
                    text = block.get("text")
                    if isinstance(text, str):
                        pending.append(text)
                else:
                    pending.append(describe_block(block))
        flush()

    def finish(self) -> list[ParsedMessage]:
        drop: set[int] = set()
        for group in self.groups.values():
            message = group.text_message
            thinking = "\n\n".join(group.thinking)
            if group.texts:
                message.content = "\n\n".join(group.texts)
                if thinking:
                    message.metadata["thinking"] = thinking
            elif group.tool_messages:
                drop.add(id(message))
                first = group.tool_messages[0]
                for key in ("request_id", "stop_reason", "usage"):
                    if key in message.metadata:
                        first.metadata[key] = message.metadata[key]
                if thinking:
                    first.metadata["thinking"] = thinking
            elif thinking:
                message.metadata["thinking"] = thinking
            else:
                drop.add(id(message))
        return [m for m in self.messages if id(m) not in drop]


def parse_claude_code(data: bytes) -> list[ParsedSession]:
    """Parse one Claude Code session file; returns [] when it holds no conversation."""
    text = decode_text(data)
    require_text(text)
    records: list[_Record] = []
    parents: dict[str, tuple[str, str]] = {}
    tool_names: dict[str, str] = {}
    custom_title = ai_title = ""
    summaries: list[tuple[str, str]] = []
    recognised = False
    for line, obj in iter_json_lines(text):
        kind = tag(obj)
        if kind in _KNOWN_TYPES or "sessionId" in obj or "parentUuid" in obj:
            recognised = True
        uuid = obj.get("uuid")
        if isinstance(uuid, str) and uuid:
            parent = obj.get("parentUuid")
            logical = obj.get("logicalParentUuid")
            parents[uuid] = (
                parent if isinstance(parent, str) else "",
                logical if isinstance(logical, str) else "",
            )
        if kind == "custom-title" and isinstance(obj.get("customTitle"), str):
            custom_title = obj["customTitle"]
        elif kind == "ai-title" and isinstance(obj.get("aiTitle"), str):
            ai_title = obj["aiTitle"]
        elif kind == "summary" and isinstance(obj.get("summary"), str):
            summaries.append((str(obj.get("leafUuid") or ""), obj["summary"]))
        elif kind in ("user", "assistant"):
            record = _read_record(line, obj, kind)
            records.append(record)
            if kind == "assistant" and isinstance(record.content, list):
                for block in record.content:
                    if tag(block) in _TOOL_USE_TYPES and isinstance(block.get("id"), str):
                        tool_names[block["id"]] = str(block.get("name") or "")
        elif kind not in _KNOWN_TYPES:
            skip("record type", kind or "(none)")
    if not recognised:
        raise ImportFormatError(
            "this does not look like a Claude Code session: no line has a Claude Code "
            "'type' (user, assistant, summary, ...) or a 'sessionId'"
        )
    if not records:
        return []

    path = _thread_uuids(records, parents)
    selected = _select(records, path)
    builder = _Builder(tool_names)
    for record in selected:
        if record.kind == "assistant":
            builder.add_assistant(record)
        else:
            builder.add_user(record)
    messages = builder.finish()
    ensure_unique_client_ids(messages)

    title = custom_title or ai_title
    if not title and summaries:
        on_thread = [s for leaf, s in summaries if leaf in path]
        title = (on_thread or [s for _, s in summaries])[-1]
    started, ended = time_bounds(messages)
    main = [r for r in selected if not r.sidechain] or selected
    session_ids = distinct([tag(r.obj, "sessionId") for r in selected])
    versions = distinct([tag(r.obj, "version") for r in selected])
    metadata: dict[str, Any] = {
        "cwd": next((tag(r.obj, "cwd") for r in main if tag(r.obj, "cwd")), ""),
        "git_branch": next((tag(r.obj, "gitBranch") for r in main if tag(r.obj, "gitBranch")), ""),
        "version": versions[-1] if versions else "",
        "models": distinct([tag(r.message, "model") for r in selected]),
    }
    if len(versions) > 1:
        metadata["versions"] = versions
    entrypoint = next((tag(r.obj, "entrypoint") for r in main if tag(r.obj, "entrypoint")), "")
    if entrypoint:
        metadata["entrypoint"] = entrypoint
    if len(session_ids) > 1:
        metadata["session_ids"] = session_ids
    leaf_session = next((tag(r.obj, "sessionId") for r in reversed(main)), "")
    session = ParsedSession(
        source_format=NAME,
        messages=messages,
        external_id=leaf_session or (session_ids[0] if session_ids else ""),
        title=title,
        agent_name=AGENT_NAME,
        started_at=started,
        ended_at=ended,
        metadata={k: v for k, v in metadata.items() if v not in ("", [])},
    )
    return [session]


_CLAUDE_TYPES = {
    "summary",
    "file-history-snapshot",
    "permission-mode",
    "ai-title",
    "custom-title",
    "last-prompt",
    "queue-operation",
}


def _claims_record(obj: dict[str, Any]) -> int:
    # Below Gemini CLI's, OpenCode's and Codex's claims: their records carry a 'sessionId' too.
    return 50 if "sessionId" in obj or "parentUuid" in obj or tag(obj) in _CLAUDE_TYPES else 0


def _claims_lines(sample: Sample) -> int:
    return 50 if NAME in sample.owners else 0


FORMAT = Format(
    name=NAME,
    position=1,
    description="Claude Code session JSONL",
    documentation=("Claude Code session JSONL (`~/.claude/projects/<project>/<session>.jsonl`)"),
    parse=parse_claude_code,
    recognition=Recognition(record=_claims_record, lines=_claims_lines),
    label="Claude Code JSONL",
)


__all__ = ["parse_claude_code"]
