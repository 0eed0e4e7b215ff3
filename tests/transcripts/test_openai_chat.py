import json

import pytest

from transcripts.base import ImportFormatError
from transcripts.formats.openai_chat import parse_openai_chat

from .helpers import check_invariants, roles, sample

# Counted from the file: per run, messages (assistant tool_calls split one per call) and
# roles. Runs 3, 5 and 7 each have one assistant message with both text and a tool call.
TAU_COUNTS = [
    (32, {"system": 1, "user": 8, "assistant": 15, "tool": 8}),
    (12, {"system": 1, "user": 6, "assistant": 5}),
    (24, {"system": 1, "user": 5, "assistant": 11, "tool": 7}),
    (63, {"system": 1, "user": 11, "assistant": 31, "tool": 20}),
    (26, {"system": 1, "user": 7, "assistant": 12, "tool": 6}),
    (27, {"system": 1, "user": 7, "assistant": 13, "tool": 6}),
    (24, {"system": 1, "user": 6, "assistant": 11, "tool": 6}),
    (27, {"system": 1, "user": 8, "assistant": 13, "tool": 5}),
    (18, {"system": 1, "user": 9, "assistant": 8}),
    (52, {"system": 1, "user": 26, "assistant": 25}),
]


def test_tau_bench_sample():
    sessions = parse_openai_chat(sample("openai_chat/tau-bench-airline-first10.json"))
    assert len(sessions) == 10
    for session, (count, role_counts) in zip(sessions, TAU_COUNTS, strict=True):
        check_invariants(session)
        assert len(session.messages) == count
        assert roles(session) == role_counts
    first = sessions[0]
    assert first.external_id == "task-0-trial-0"
    assert first.agent_name == "tau-bench"
    assert first.metadata["reward"] == 0.0
    assert first.metadata["task_id"] == 0
    assert first.metadata["info"]["task"]["user_id"] == "mia_li_3668"
    assert sessions[6].metadata["reward"] == 1.0
    call, result = first.messages[6], first.messages[7]
    assert (call.role, call.tool_name, call.tool_call_id) == (
        "assistant",
        "get_user_details",
        "call_oIHazX6yQrB8hUwl4cRilFKj",
    )
    assert call.content == "user_id: mia_li_3668"
    assert (result.role, result.tool_name, result.tool_call_id) == (
        "tool",
        "get_user_details",
        "call_oIHazX6yQrB8hUwl4cRilFKj",
    )
    assert result.content.startswith('{"name": {"first_name": "Mia"')


def test_reused_call_ids_stay_unambiguous():
    # tau-bench run 0 reuses two ids: search_direct_flight's for search_onestop_flight and
    # get_user_details's for calculate
    first = parse_openai_chat(sample("openai_chat/tau-bench-airline-first10.json"))[0]
    reused = [m for m in first.messages if m.metadata.get("source_tool_call_id")]
    assert [(m.role, m.tool_name, m.tool_call_id) for m in reused] == [
        ("assistant", "search_onestop_flight", "call_HGn16KZh9oNCruxsMJ4gYXan#2"),
        ("tool", "search_onestop_flight", "call_HGn16KZh9oNCruxsMJ4gYXan#2"),
        ("assistant", "calculate", "call_oIHazX6yQrB8hUwl4cRilFKj#2"),
        ("tool", "calculate", "call_oIHazX6yQrB8hUwl4cRilFKj#2"),
    ]
    assert reused[0].metadata["source_tool_call_id"] == "call_HGn16KZh9oNCruxsMJ4gYXan"


def test_shapes_bare_list_wrapped_list_of_lists_and_jsonl():
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert len(parse_openai_chat(json.dumps(messages).encode())) == 1
    [wrapped] = parse_openai_chat(
        json.dumps(
            {"id": "conv-9", "title": "Greeting", "model": "gpt-4o", "messages": messages}
        ).encode()
    )
    assert (wrapped.external_id, wrapped.title, wrapped.metadata) == (
        "conv-9",
        "Greeting",
        {"model": "gpt-4o"},
    )
    assert wrapped.messages[1].author == "gpt-4o"
    assert len(parse_openai_chat(json.dumps([messages, {"messages": messages}]).encode())) == 2
    jsonl = "\n".join(json.dumps({"messages": messages}) for _ in range(3)).encode()
    assert len(parse_openai_chat(jsonl)) == 3


def test_parts_developer_refusal_and_legacy_function_calls():
    messages = [
        {"role": "developer", "content": "Be terse."},
        {"role": "user", "content": [
            {"type": "text", "text": "What is in this picture?"},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]},
        {"role": "assistant", "content": None, "refusal": "I can't help with that."},
        {"role": "assistant", "content": "Let me check.",
         "tool_calls": [
             {"id": "c1", "type": "function",
              "function": {"name": "run_shell",
                           "arguments": json.dumps({"command": "ls", "cwd": "/"})}},
             {"id": "c2", "type": "function",
              "function": {"name": "lookup", "arguments": "{not json"}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "nothing"},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "a\nb"}]},
        {"role": "assistant", "content": None,
         "function_call": {"name": "get_time", "arguments": "{}"}},
        {"role": "function", "name": "get_time", "content": "12:00"},
    ]  # fmt: skip
    [session] = parse_openai_chat(json.dumps(messages).encode())
    check_invariants(session)
    assert [(m.role, m.tool_name, m.tool_call_id, m.content) for m in session.messages] == [
        ("system", "", "", "Be terse."),
        ("user", "", "", "What is in this picture?\n[image]"),
        ("assistant", "", "", "I can't help with that."),
        ("assistant", "", "", "Let me check."),
        ("assistant", "run_shell", "c1", "ls"),
        ("assistant", "lookup", "c2", "{not json"),
        ("tool", "lookup", "c2", "nothing"),
        ("tool", "run_shell", "c1", "a\nb"),
        ("assistant", "get_time", "6#call", ""),
        ("tool", "get_time", "6#call", "12:00"),
    ]
    assert session.messages[0].metadata == {"source_role": "developer"}
    assert session.messages[4].metadata["input_extra"] == {"cwd": "/"}


@pytest.mark.parametrize(
    ("document", "field", "words"),
    [
        ([{"role": "user", "content": 5}], "[0].content",
         "'content' must be a string, null or a list of parts"),
        ([[{"role": "user", "content": "x"}], {"messages": "nope"}], "[1].messages",
         "must be a list of messages"),
        ([{"role": "assistant", "tool_calls": {"id": 1}}], "[0].tool_calls",
         "'tool_calls' must be a list"),
        ({"conversation": []}, None, "'messages'"),
    ],
)  # fmt: skip
def test_wrong_types_name_the_field(document, field, words):
    with pytest.raises(ImportFormatError) as caught:
        parse_openai_chat(json.dumps(document).encode())
    assert caught.value.field == field
    assert words in caught.value.message


def test_jsonl_error_names_the_line():
    good = json.dumps({"messages": [{"role": "user", "content": "hi"}]})
    bad = json.dumps({"messages": [{"role": "user", "content": 1}]})
    with pytest.raises(ImportFormatError) as caught:
        parse_openai_chat("\n".join([good, good, bad]).encode())
    assert (caught.value.line, caught.value.field) == (3, "messages[0].content")
