"""Format drift, property-style: each real sample and fixture with unknown records put in,
new fields added or optional fields taken out still imports, with the same messages and the
unknown records counted in ``skipped`` (never a failed file)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcripts import ImportFormatError, parse

from .helpers import FIXTURES, SAMPLES, check_invariants

ANTHROPIC = next((FIXTURES / "anthropic_session").iterdir()) / "transcript.jsonl"
NDJSON = "\n".join(
    json.dumps(event)
    for event in [
        {"ts": 1704067200, "source": "chainlit", "session_id": "chainlit:abc",
         "person_id": "p_me", "char_id": "char_cathy", "sender": "user",
         "text": "How are you today?"},
        {"ts": 1704067205, "source": "chainlit", "session_id": "chainlit:abc",
         "person_id": "p_me", "char_id": "char_cathy", "sender": "assistant",
         "text": "Doing well!"},
    ]
)  # fmt: skip


def _read(path: Path) -> bytes:
    return path.read_bytes()


# (format, id, the file's bytes, where unknown records go, optional fields to drop)
FILES: list[tuple[str, str, Callable[[], bytes], str, tuple[str, ...]]] = [
    ("claude_code", "raze", lambda: _read(SAMPLES / "claude_code" / "raze.jsonl"), "line",
     ("version", "gitBranch", "cwd", "userType", "requestId", "entrypoint", "slug")),
    ("claude_code", "agentic-wallet",
     lambda: _read(SAMPLES / "claude_code" / "agentic-wallet.jsonl"), "line",
     ("version", "gitBranch", "cwd", "userType", "requestId", "entrypoint", "slug")),
    ("claude_code", "branches", lambda: _read(FIXTURES / "claude_code_branches.jsonl"), "line",
     ("version", "gitBranch", "cwd", "userType", "requestId")),
    ("codex", "firststep", lambda: _read(SAMPLES / "codex" / "firststep.jsonl"), "line",
     ("cli_version", "originator", "git", "instructions", "model_provider", "source",
      "summary", "encrypted_content", "effort", "sandbox_policy", "approval_policy")),
    ("codex", "legacy", lambda: _read(FIXTURES / "codex_legacy.jsonl"), "line",
     ("instructions", "git", "summary", "encrypted_content")),
    ("anthropic_session", "amplifier", lambda: _read(ANTHROPIC), "line", ()),
    ("openai_chat", "tau-bench",
     lambda: _read(SAMPLES / "openai_chat" / "tau-bench-airline-first10.json"), "openai",
     ("reward", "info", "trial")),
    ("chatgpt", "conversations", lambda: _read(FIXTURES / "chatgpt_conversations.json"),
     "chatgpt", ("update_time", "weight", "end_turn", "status", "metadata")),
    ("anthropic_managed_agent", "managed-agent",
     lambda: _read(FIXTURES / "managed_agent" / "session-events.jsonl"), "line",
     ("kind", "tool", "time", "evaluated_permission", "model_usage", "stop_reason", "is_error")),
    ("gemini_cli", "chat-recording",
     lambda: _read(FIXTURES / "gemini_cli" / "session-2025-10-18T14-57-f3c1e2d4.json"),
     "gemini", ("projectHash", "lastUpdated", "thoughts", "tokens", "model", "displayName",
                "description", "resultDisplay")),
    ("opencode", "export",
     lambda: _read(FIXTURES / "opencode" / "ses_6b1f0c2a3ffeQ9tWmZ4kV8nR2d.json"), "opencode",
     ("slug", "version", "projectID", "directory", "cost", "tokens", "metadata", "title",
      "snapshot", "providerID", "mode", "path")),
    ("ndjson_events", "chainlit", lambda: NDJSON.encode(), "", ("source", "person_id")),
]  # fmt: skip
IDS = [f"{name}-{label}" for name, label, *_ in FILES]

# Names no format uses, so a record of this type (or a field of this name) is news to it.
NEW_NAMES = st.from_regex(r"\Azz[a-z_]{1,12}\Z", fullmatch=True)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NEW_NAMES, inner, max_size=3),
    max_leaves=6,
)
DRIFT = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _messages(data: bytes, fmt: str) -> list[tuple]:
    """What must survive drift: who said what, when, and the tool call it belongs to."""
    parsed = parse(data, format=fmt)
    for session in parsed:
        check_invariants(session)
    return [
        (m.role, m.content, m.tool_name, m.tool_call_id, m.timestamp)
        for session in parsed
        for m in session.messages
    ]


_DOCUMENTS = ("openai_chat", "chatgpt", "gemini_cli", "opencode")


def _load(data: bytes, fmt: str) -> Any:
    text = data.decode("utf-8")
    if fmt in _DOCUMENTS:
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _dump(document: Any, fmt: str) -> bytes:
    if fmt in _DOCUMENTS:
        return json.dumps(document).encode()
    return "\n".join(json.dumps(line) for line in document).encode()


def _unknown_record(fmt: str, name: str, extra: dict[str, Any]) -> dict[str, Any]:
    """A record of a type (or role) ``fmt`` does not know, in the format's own envelope."""
    if fmt == "claude_code":
        return {**extra, "type": name, "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z"}
    if fmt == "codex":
        return {"timestamp": "2026-01-01T00:00:00Z", "type": name, "payload": extra}
    if fmt == "anthropic_managed_agent":
        raw = {**extra, "id": "sevt_zz", "type": f"agent.{name}", "processed_at": "2026-05-04"}
        return {"role": "agent", "kind": name, "time": "2026-05-04T00:00:00Z", "raw": raw}
    return {**extra, "role": name, "content": "a record of a role the format does not know"}


def _reason(fmt: str, name: str) -> str:
    return {
        "claude_code": f"unknown record type '{name}'",
        "codex": f"unknown record type '{name}'",
        "chatgpt": f"unknown author role '{name}'",
        "anthropic_managed_agent": f"unknown event type 'agent.{name}'",
        "gemini_cli": f"unknown message type '{name}'",
        "opencode": f"unknown part type '{name}'",
    }.get(fmt, f"unknown role '{name}'")


def _insert_chatgpt_node(document: list, data: st.DataObject, name: str) -> None:
    """A node of an unknown author role between a node of the current thread and its parent."""
    conversation = data.draw(st.sampled_from([c for c in document if "current_node" in c]))
    mapping = conversation["mapping"]
    thread, node_id = [], conversation["current_node"]
    while mapping[node_id].get("parent"):
        thread.append(node_id)
        node_id = mapping[node_id]["parent"]
    child_id = data.draw(st.sampled_from(thread))
    child = mapping[child_id]
    parent = mapping[child["parent"]]
    new_id = f"zz-{len(mapping)}"
    mapping[new_id] = {
        "id": new_id,
        "parent": child["parent"],
        "children": [child_id],
        "message": {
            "id": new_id,
            "author": {"role": name},
            "content": {"content_type": "text", "parts": ["said by a new kind of author"]},
        },
    }
    parent["children"] = [new_id if c == child_id else c for c in parent["children"]]
    child["parent"] = new_id


@pytest.mark.parametrize(("fmt", "label", "read", "where", "optional"), FILES, ids=IDS)
@DRIFT
@given(data=st.data())
def test_unknown_records_are_skipped_and_counted(fmt, label, read, where, optional, data):
    if not where:
        pytest.skip(f"{fmt} has no record type or role to be unknown: every sender is a speaker")
    original = read()
    document = _load(original, fmt)
    name = data.draw(NEW_NAMES, label="type")
    count = data.draw(st.integers(1, 4), label="count")
    for _ in range(count):
        extra = data.draw(st.dictionaries(NEW_NAMES, JSON_VALUES, max_size=3), label="fields")
        if where == "line":
            document.insert(
                data.draw(st.integers(0, len(document))), _unknown_record(fmt, name, extra)
            )
        elif where == "openai":
            traj = data.draw(st.sampled_from(document))["traj"]
            traj.insert(data.draw(st.integers(0, len(traj))), _unknown_record(fmt, name, extra))
        elif where == "gemini":
            records = document["messages"]
            record = {**extra, "id": f"zz-{len(records)}", "type": name, "content": "new"}
            records.insert(data.draw(st.integers(0, len(records))), record)
        elif where == "opencode":
            parts = data.draw(st.sampled_from(document["messages"]))["parts"]
            parts.insert(data.draw(st.integers(0, len(parts))), {**extra, "type": name})
        else:
            _insert_chatgpt_node(document, data, name)
    before = parse(original, format=fmt).skipped  # a fixture may hold unknown records itself
    parsed = parse(_dump(document, fmt), format=fmt)
    assert parsed.skipped == {**before, _reason(fmt, name): count}
    assert _messages(_dump(document, fmt), fmt) == _messages(original, fmt)


def _objects(value: Any, depth: int) -> list[dict]:
    """The objects of a record down to ``depth`` levels (the record is level 0)."""
    found = [value] if isinstance(value, dict) else []
    if depth:
        children = value.values() if isinstance(value, dict) else value
        for child in children if isinstance(value, dict | list) else []:
            found += _objects(child, depth - 1)
    return found


# Where a new field is format drift rather than new data: the envelopes, not a tool's input
# or a message's text (a new key inside a tool's arguments is what the tool was given).
_DATA_KEYS = {"input", "arguments", "content", "parts", "output", "toolUseResult", "text"}


def _envelopes(record: Any, depth: int = 2) -> list[dict]:
    found = [record] if isinstance(record, dict) else []
    if depth and isinstance(record, dict):
        for key, child in record.items():
            if key not in _DATA_KEYS:
                found += _envelopes(child, depth - 1)
    elif depth and isinstance(record, list):
        for child in record:
            found += _envelopes(child, depth - 1)
    return found


@pytest.mark.parametrize(("fmt", "label", "read", "where", "optional"), FILES, ids=IDS)
@DRIFT
@given(data=st.data())
def test_new_fields_change_nothing(fmt, label, read, where, optional, data):
    original = read()
    document = _load(original, fmt)
    depth = 4 if fmt in _DOCUMENTS else 2
    targets = _envelopes(document, depth)
    for _ in range(data.draw(st.integers(1, 8), label="fields")):
        target = data.draw(st.sampled_from(targets))
        target[data.draw(NEW_NAMES)] = data.draw(JSON_VALUES)
    drifted = _dump(document, fmt)
    assert parse(drifted, format=fmt).skipped == parse(original, format=fmt).skipped
    assert _messages(drifted, fmt) == _messages(original, fmt)


def _drop(value: Any, names: set[str]) -> int:
    dropped = 0
    if isinstance(value, dict):
        for name in names & set(value):
            del value[name]
            dropped += 1
        children = list(value.values())
    else:
        children = value if isinstance(value, list) else []
    return dropped + sum(_drop(child, names) for child in children)


@pytest.mark.parametrize(("fmt", "label", "read", "where", "optional"), FILES, ids=IDS)
@DRIFT
@given(data=st.data())
def test_missing_optional_fields_change_no_message(fmt, label, read, where, optional, data):
    if not optional:
        pytest.skip(f"{fmt}: every field this fixture has is one the format needs")
    original = read()
    document = _load(original, fmt)
    names = data.draw(st.sets(st.sampled_from(optional), min_size=1), label="dropped")
    _drop(document, set(names))
    drifted = _dump(document, fmt)
    assert parse(drifted, format=fmt).skipped == parse(original, format=fmt).skipped
    assert _messages(drifted, fmt) == _messages(original, fmt)


@pytest.mark.parametrize(
    ("fmt", "record"),
    [
        ("claude_code", {"type": "zzfuture", "sessionId": "s"}),
        ("codex", {"type": "response_item", "payload": {"type": "zzfuture"}}),
        ("anthropic_session", {"role": "zzcritic", "content": "x"}),
        ("openai_chat", {"role": "zzcritic", "content": "x"}),
    ],
)
def test_a_file_of_unknown_records_only_is_refused_clearly(fmt, record):
    data = (json.dumps([record]) if fmt == "openai_chat" else json.dumps(record)).encode()
    with pytest.raises(ImportFormatError) as caught:
        parse(data, format=fmt)
    assert "nothing in the file could be read" in caught.value.message
    assert "zz" in caught.value.message  # the unknown type is named
    assert caught.value.status == 400


def test_skips_are_counted_per_file():
    record = b'{"role": "zzcritic", "content": "x"}\n{"role": "user", "content": "hi"}'
    first = parse(record, format="anthropic_session")
    second = parse(b'{"role": "user", "content": "hi"}', format="anthropic_session")
    assert first.skipped == {"unknown role 'zzcritic'": 1}
    assert second.skipped == {}
    # the list is still a list of sessions for every caller
    assert [m.content for m in copy.copy(first)[0].messages] == ["hi"]
