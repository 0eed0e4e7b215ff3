"""Claude Managed Agents session event logs: the export's wrapped events, bare API events and
an events page all read as one session, tool calls joined to their results."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from transcripts import ImportFormatError, detect_format, parse

from .helpers import FIXTURES, check_invariants

LOG = FIXTURES / "managed_agent" / "session-events.jsonl"


def _raw_events() -> list[dict]:
    return [json.loads(line)["raw"] for line in LOG.read_text().splitlines() if line.strip()]


def test_the_exported_log_reads_faithfully():
    data = LOG.read_bytes()
    assert detect_format(data) == "anthropic_managed_agent"
    parsed = parse(data)
    assert parsed.skipped == {}
    [session] = parsed
    check_invariants(session)
    assert [(m.role, m.tool_name, m.tool_call_id) for m in session.messages] == [
        ("user", "", ""),
        ("assistant", "bash", "sevt_01E"),
        ("tool", "bash", "sevt_01E"),
        ("assistant", "bash", "sevt_01J"),
        ("tool", "bash", "sevt_01J"),
        ("assistant", "", ""),
    ]
    call, result = session.messages[1], session.messages[2]
    assert call.content == "wc -l data/orders.csv"
    assert call.metadata["thinking"].startswith("Count the lines first")
    assert call.metadata["evaluated_permission"] == "allow"
    assert result.content == "1201 data/orders.csv\n"
    assert result.metadata == {"is_error": False}
    assert session.messages[-1].content.startswith("data/orders.csv has 1,200 orders")
    assert session.messages[0].timestamp == datetime(2026, 5, 4, 9, 12, 0, 201000, tzinfo=UTC)
    assert session.started_at == datetime(2026, 5, 4, 9, 12, 0, 114000, tzinfo=UTC)
    assert session.ended_at == datetime(2026, 5, 4, 9, 12, 9, 702000, tzinfo=UTC)
    assert session.status == "completed"
    assert session.external_id == "sevt_01A"
    assert session.agent_name == "claude-managed-agent"
    assert session.metadata == {
        "model_requests": 3,
        "usage": {
            "input_tokens": 5847,
            "output_tokens": 205,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 5332,
        },
        "errors": ["Overloaded"],
        "stop_reason": "end_turn",
    }


def _signature(data: bytes) -> list[tuple]:
    [session] = parse(data)
    return [(m.role, m.content, m.tool_call_id, m.timestamp) for m in session.messages]


def test_bare_api_events_and_an_events_page_read_the_same():
    wrapped = _signature(LOG.read_bytes())
    events = _raw_events()
    jsonl = "\n".join(json.dumps(event) for event in events).encode()
    page = json.dumps({"data": events, "next_page": None}).encode()
    listed = json.dumps(events).encode()
    for data in (jsonl, page, listed):
        assert detect_format(data) == "anthropic_managed_agent"
    # The API's thinking event carries no text: only the export's wrapper has it.
    assert _signature(jsonl) == _signature(page) == _signature(listed) == wrapped


def test_mcp_and_custom_tools_join_their_results_and_unknown_events_are_counted():
    events = [
        {"id": "e1", "type": "user.message", "processed_at": "2026-05-04T10:00:00Z",
         "content": [{"type": "text", "text": "look it up"}]},
        {"id": "e2", "type": "agent.mcp_tool_use", "processed_at": "2026-05-04T10:00:01Z",
         "name": "search_issues", "mcp_server_name": "github", "input": {"q": "flaky"}},
        {"id": "e3", "type": "agent.mcp_tool_result", "processed_at": "2026-05-04T10:00:02Z",
         "mcp_tool_use_id": "e2", "content": [{"type": "text", "text": "#12 flaky test"}],
         "is_error": False},
        {"id": "e4", "type": "agent.custom_tool_use", "processed_at": "2026-05-04T10:00:03Z",
         "name": "lookup", "input": {"id": 12}},
        {"id": "e5", "type": "user.custom_tool_result", "processed_at": "2026-05-04T10:00:04Z",
         "custom_tool_use_id": "e4", "content": [{"type": "text", "text": "closed"}],
         "is_error": True},
        {"id": "e6", "type": "agent.zz_hologram", "processed_at": "2026-05-04T10:00:05Z"},
        {"id": "e7", "type": "user.interrupt", "processed_at": "2026-05-04T10:00:06Z"},
        {"id": "e8", "type": "session.status_terminated", "processed_at": "2026-05-04T10:00:07Z"},
    ]  # fmt: skip
    parsed = parse("\n".join(json.dumps(e) for e in events).encode())
    assert parsed.skipped == {"unknown event type 'agent.zz_hologram'": 1}
    [session] = parsed
    check_invariants(session)
    call, result, custom, custom_result = session.messages[1:]
    assert (call.tool_name, call.metadata["mcp_server_name"], call.metadata["tool_kind"]) == (
        "search_issues",
        "github",
        "mcp",
    )
    assert (result.tool_call_id, result.content, result.tool_name) == (
        "e2",
        "#12 flaky test",
        "search_issues",
    )
    assert custom.metadata["tool_kind"] == "custom"
    assert (custom_result.tool_call_id, custom_result.metadata) == ("e4", {"is_error": True})
    assert session.status == "error"
    assert session.metadata["interrupts"] == 1


def test_a_result_without_its_call_is_kept_unlinked():
    events = [
        {"id": "e1", "type": "agent.tool_result", "tool_use_id": "gone",
         "processed_at": "2026-05-04T10:00:00Z", "content": [{"type": "text", "text": "ok"}]},
    ]  # fmt: skip
    [session] = parse(json.dumps(events).encode(), format="anthropic_managed_agent")
    check_invariants(session)
    [result] = session.messages
    assert (result.role, result.tool_call_id, result.metadata) == (
        "tool",
        "",
        {"tool_use_id": "gone"},
    )


@pytest.mark.parametrize(
    ("data", "line", "words"),
    [
        (b'{"role": "user", "content": "hi"}', None, "does not look like a Managed Agents"),
        (b'{"id": "e1", "type": "user.message", "processed_at": "yesterday"}', 1,
         "'processed_at' is not an ISO-8601 time"),
        (b'{"id": "e1", "type": "user.message"}\n[1]', 2, "expected a JSON object"),
    ],
)  # fmt: skip
def test_unreadable_logs_are_refused_with_the_line(data, line, words):
    with pytest.raises(ImportFormatError) as caught:
        parse(data, format="anthropic_managed_agent")
    assert caught.value.line == line
    assert words in caught.value.message


def test_the_reported_refusal_is_gone():
    """The shape of issue 19: agent events used to be read as Anthropic messages and refused
    with "'role' must be user, assistant, system, developer or tool; got 'agent'"."""
    line = {"role": "agent", "kind": "message", "time": "2026-05-04T10:00:00Z",
            "content": "done", "raw": {"id": "e1", "type": "agent.message",
                                       "processed_at": "2026-05-04T10:00:00Z",
                                       "content": [{"type": "text", "text": "done"}]}}  # fmt: skip
    [session] = parse(json.dumps(line).encode())
    assert [(m.role, m.content) for m in session.messages] == [("assistant", "done")]
